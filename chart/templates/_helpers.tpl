{{/*
Names, labels and images. Every name fits in 63 characters (52 for the CronJob, whose Jobs
get an 11-character suffix), shortening the release part and keeping the component suffix. Release "haptic" yields the documented names:
haptic-controller, haptic-haproxy, haptic-agent-renewal, haptic-haptic-pre-rollout.
*/}}

{{- define "haptic.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "haptic.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
"<prefix>-<suffix>" in at most <max> characters. Too long, the prefix is shortened and
followed by 8 hex digits of its SHA-256 (deterministic), never the suffix: names stay distinct
however long the release or namespace name is. Call with (list "prefix" "suffix" max).
*/}}
{{- define "haptic.suffixedName" -}}
{{- $prefix := index . 0 -}}
{{- $suffix := index . 1 -}}
{{- $max := int (index . 2) -}}
{{- if le (add (len $prefix) (len $suffix) 1) $max -}}
{{- printf "%s-%s" $prefix $suffix -}}
{{- else -}}
{{- $short := $prefix | trunc (int (sub $max (add (len $suffix) 10))) | trimSuffix "-" -}}
{{- printf "%s-%s-%s" $short ($prefix | sha256sum | trunc 8) $suffix -}}
{{- end -}}
{{- end -}}

{{/* "<fullname>-<suffix>", at most 63 characters. Call with (list $ "suffix"). */}}
{{- define "haptic.componentName" -}}
{{- include "haptic.suffixedName" (list (include "haptic.fullname" (index . 0)) (index . 1) 63) -}}
{{- end -}}

{{/*
Cluster-scoped objects (ClusterRole, ClusterRoleBinding, ValidatingWebhookConfiguration)
carry the namespace too, so equal release names in two namespaces never collide.
Call with (list $ "suffix").
*/}}
{{- define "haptic.clusterScopedName" -}}
{{- $root := index . 0 -}}
{{- include "haptic.suffixedName" (list (printf "%s-%s" $root.Release.Namespace (include "haptic.fullname" $root)) (index . 1) 63) -}}
{{- end -}}

{{- define "haptic.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "haptic.selectorLabels" -}}
app.kubernetes.io/name: {{ include "haptic.name" . | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end -}}

{{- define "haptic.labels" -}}
helm.sh/chart: {{ include "haptic.chart" . }}
{{ include "haptic.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: haptic
{{- end -}}

{{/* Labels of one component. Call with (list $ "component"). */}}
{{- define "haptic.componentLabels" -}}
{{ include "haptic.labels" (index . 0) }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{/* Selector labels of one component. Call with (list $ "component"). */}}
{{- define "haptic.componentSelectorLabels" -}}
{{ include "haptic.selectorLabels" (index . 0) }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{/* The haptic image (controller, agent, Jobs). */}}
{{- define "haptic.image" -}}
{{- $image := .Values.image -}}
{{- if $image.digest -}}
{{- printf "%s@%s" $image.repository $image.digest -}}
{{- else -}}
{{- printf "%s:%s" $image.repository (default .Chart.AppVersion $image.tag) -}}
{{- end -}}
{{- end -}}

{{/*
The HAProxy image: by default the haptic image itself, whose haproxy is the one the
config-check sandbox checks with, so a configuration is checked by the HAProxy that runs it.
*/}}
{{- define "haptic.haproxy.image" -}}
{{- if .Values.haproxy.image.repository -}}
{{- printf "%s:%s" .Values.haproxy.image.repository (required "haproxy.image.tag is required with haproxy.image.repository" .Values.haproxy.image.tag) -}}
{{- else -}}
{{- include "haptic.image" . -}}
{{- end -}}
{{- end -}}

{{/*
Component names. The Deployments, the CronJob and the webhook Service are the documented
ones; the pre-rollout Job is "<release>-<chart>-pre-rollout" whatever the overrides, as the
GitOps guide's `kubectl logs job/haptic-haptic-pre-rollout` expects.
*/}}
{{- define "haptic.controller.fullname" -}}{{ include "haptic.componentName" (list . "controller") }}{{- end -}}
{{- define "haptic.haproxy.fullname" -}}{{ include "haptic.componentName" (list . "haproxy") }}{{- end -}}
{{- define "haptic.webhook.serviceName" -}}{{ include "haptic.componentName" (list . "webhook") }}{{- end -}}
{{- define "haptic.crds.fullname" -}}{{ include "haptic.componentName" (list . "crds") }}{{- end -}}
{{- define "haptic.agentBootstrap.fullname" -}}{{ include "haptic.componentName" (list . "agent-bootstrap") }}{{- end -}}
{{- define "haptic.webhookCertificate.fullname" -}}{{ include "haptic.componentName" (list . "webhook-certificate") }}{{- end -}}
{{- define "haptic.agentRenewal.fullname" -}}
{{- include "haptic.suffixedName" (list (include "haptic.fullname" .) "agent-renewal" 52) -}}
{{- end -}}
{{- define "haptic.preRollout.fullname" -}}
{{- include "haptic.suffixedName" (list (printf "%s-%s" .Release.Name .Chart.Name) "pre-rollout" 63) -}}
{{- end -}}
{{- define "haptic.preRollout.valuesSecretName" -}}
{{- include "haptic.suffixedName" (list (printf "%s-%s" .Release.Name .Chart.Name) "pre-rollout-values" 63) -}}
{{- end -}}

{{/* Restricted security context shared by every haptic container. */}}
{{- define "haptic.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop:
    - ALL
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Pod security context of haptic-only pods (controller and Jobs). */}}
{{- define "haptic.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* imagePullSecrets of a pod spec, or nothing. */}}
{{- define "haptic.imagePullSecrets" -}}
{{- with .Values.imagePullSecrets -}}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end -}}
{{- end -}}
