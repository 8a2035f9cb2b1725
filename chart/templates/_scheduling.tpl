{{/*
Where pods run and how many may be disrupted: the scheduling fields of the two Deployments'
pod specs, of the hook Jobs and the renewal CronJob's Jobs, and the Deployments'
PodDisruptionBudgets.
*/}}

{{/*
priorityClassName, topologySpreadConstraints, nodeSelector, tolerations and affinity of a
Deployment's pod spec, from its values group (controller or haproxy). One spread constraint per
topologySpread.topologyKeys entry, selecting the Deployment's own Pods; matchLabelKeys keeps the
count to Pods of one ReplicaSet, so a rollout's new Pods spread among themselves. Without an
affinity of the user's, podAntiAffinityPreset keeps the Pods off each other's nodes: soft
(preferred) or hard (required).
Call with (list $ "component" .Values.<group>).
*/}}
{{- define "haptic.deploymentScheduling" -}}
{{- $root := index . 0 -}}
{{- $component := index . 1 -}}
{{- $group := index . 2 -}}
{{- with $group.priorityClassName }}
priorityClassName: {{ . | quote }}
{{- end }}
{{- with $group.topologySpread.topologyKeys }}
topologySpreadConstraints:
  {{- range . }}
  - maxSkew: {{ $group.topologySpread.maxSkew }}
    topologyKey: {{ . | quote }}
    whenUnsatisfiable: {{ $group.topologySpread.whenUnsatisfiable }}
    labelSelector:
      matchLabels:
        {{- include "haptic.componentSelectorLabels" (list $root $component) | nindent 8 }}
    matchLabelKeys:
      - pod-template-hash
  {{- end }}
{{- end }}
{{- if and (not $group.affinity) $group.podAntiAffinityPreset }}
{{- $term := dict "topologyKey" "kubernetes.io/hostname" "labelSelector" (dict "matchLabels" (include "haptic.componentSelectorLabels" (list $root $component) | fromYaml)) }}
affinity:
  podAntiAffinity:
    {{- if eq $group.podAntiAffinityPreset "hard" }}
    requiredDuringSchedulingIgnoredDuringExecution:
      {{- toYaml (list $term) | nindent 6 }}
    {{- else }}
    preferredDuringSchedulingIgnoredDuringExecution:
      {{- toYaml (list (dict "weight" 100 "podAffinityTerm" $term)) | nindent 6 }}
    {{- end }}
{{- end }}
{{- include "haptic.nodePlacement" $group }}
{{- end -}}

{{/*
nodeSelector, tolerations and affinity of a pod spec from a values group that has them
(controller, haproxy, jobs). Call with the group.
*/}}
{{- define "haptic.nodePlacement" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
The PodDisruptionBudget of a Deployment: rendered when its podDisruptionBudget is enabled and it
runs more than one replica (with one, any budget either blocks node drains or allows nothing).
Call with (list $ "component" "<name>" .Values.<group>).
*/}}
{{- define "haptic.podDisruptionBudget" -}}
{{- $root := index . 0 -}}
{{- $component := index . 1 -}}
{{- $name := index . 2 -}}
{{- $group := index . 3 -}}
{{- $budget := $group.podDisruptionBudget -}}
{{- if and $budget.enabled (gt (int $group.replicas) 1) -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ $name }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "haptic.componentLabels" (list $root $component) | nindent 4 }}
spec:
  {{- if not (kindIs "invalid" $budget.maxUnavailable) }}
  maxUnavailable: {{ $budget.maxUnavailable }}
  {{- else }}
  minAvailable: {{ $budget.minAvailable }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "haptic.componentSelectorLabels" (list $root $component) | nindent 6 }}
{{- end -}}
{{- end -}}
