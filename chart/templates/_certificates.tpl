{{/*
Certificate sources, decided in one place.

Agent TLS (haproxy.agent.tls), exactly one provider per release:
  legacy        enabled: false         HTTP Basic authentication, no identities
  external      managed: false         the chart only references your two Secrets
  cert-manager  certManager.enabled    Certificates (and, with createIssuer, a private CA)
  default       otherwise              bootstrap Job + CronJob running `haptic certificates renew`

Webhook serving certificate (controller.webhook), when enabled:
  cert-manager  certManager.enabled    chart-created self-signed CA; caBundle injected
  external      secretName (+ caBundle)
  default       neither                hook Job `haptic certificates webhook`: own CA, caBundle set
  none          enabled: false         the webhook is not registered

Default frontend certificate (defaultSSLCertificate):
  cert-manager  certManager.enabled (null follows controller.webhook.certManager.enabled)
  external      secretName
  none          neither
*/}}

{{- define "haptic.agentTLS.provider" -}}
{{- $tls := .Values.haproxy.agent.tls -}}
{{- if not $tls.enabled -}}legacy
{{- else if not $tls.managed -}}external
{{- else if $tls.certManager.enabled -}}cert-manager
{{- else -}}default
{{- end -}}
{{- end -}}

{{/* Non-empty when the chart runs `haptic certificates renew` (bootstrap Job + CronJob). */}}
{{- define "haptic.agentTLS.defaultProvider" -}}
{{- if eq (include "haptic.agentTLS.provider" .) "default" -}}true{{- end -}}
{{- end -}}

{{/* Non-empty when the chart creates the cert-manager root CA and CA Issuer for agents. */}}
{{- define "haptic.agentTLS.certManagerCreatesIssuer" -}}
{{- if and (eq (include "haptic.agentTLS.provider" .) "cert-manager") .Values.haproxy.agent.tls.certManager.createIssuer -}}true{{- end -}}
{{- end -}}

{{/* Non-empty when the release has an issuer Secret of its own. */}}
{{- define "haptic.agentTLS.hasIssuerSecret" -}}
{{- if or (include "haptic.agentTLS.defaultProvider" .) (include "haptic.agentTLS.certManagerCreatesIssuer" .) -}}true{{- end -}}
{{- end -}}

{{- define "haptic.agentTLS.issuerSecretName" -}}
{{- .Values.haproxy.agent.tls.issuerSecretName | default (include "haptic.componentName" (list . "agent-ca")) -}}
{{- end -}}

{{/* In external mode there is no default: the values check requires the name. */}}
{{- define "haptic.agentTLS.serverSecretName" -}}
{{- $tls := .Values.haproxy.agent.tls -}}
{{- if $tls.managed -}}
{{- $tls.serverSecretName | default (include "haptic.componentName" (list . "agent-server-tls")) -}}
{{- else -}}
{{- $tls.serverSecretName -}}
{{- end -}}
{{- end -}}

{{- define "haptic.agentTLS.clientSecretName" -}}
{{- $tls := .Values.haproxy.agent.tls -}}
{{- if $tls.managed -}}
{{- $tls.clientSecretName | default (include "haptic.componentName" (list . "agent-client-tls")) -}}
{{- else -}}
{{- $tls.clientSecretName -}}
{{- end -}}
{{- end -}}

{{/* The identity Secrets of this release (and its issuer Secret), as a JSON list. */}}
{{- define "haptic.agentTLS.secretNames" -}}
{{- $names := list -}}
{{- if ne (include "haptic.agentTLS.provider" .) "legacy" -}}
{{- if include "haptic.agentTLS.hasIssuerSecret" . -}}
{{- $names = append $names (include "haptic.agentTLS.issuerSecretName" .) -}}
{{- end -}}
{{- $names = append $names (include "haptic.agentTLS.serverSecretName" .) -}}
{{- $names = append $names (include "haptic.agentTLS.clientSecretName" .) -}}
{{- end -}}
{{- toJson $names -}}
{{- end -}}

{{/*
`haptic certificates renew` arguments, shared by the bootstrap Job and the CronJob so the two
can never disagree about names or lifetime.
*/}}
{{- define "haptic.agentTLS.renewArgs" -}}
{{- $tls := .Values.haproxy.agent.tls -}}
- certificates
- renew
- --namespace={{ .Release.Namespace }}
- --issuer-secret={{ include "haptic.agentTLS.issuerSecretName" . }}
- --server-secret={{ include "haptic.agentTLS.serverSecretName" . }}
- --client-secret={{ include "haptic.agentTLS.clientSecretName" . }}
- --server-name={{ $tls.serverName }}
- --client-name={{ $tls.clientName }}
- --validity-days={{ int $tls.certValidityDays }}
{{- end -}}

{{/*
RBAC rules of the certificate Jobs: create Secrets (RBAC cannot restrict create by name) and
get/update/patch only the three named Secrets. Read-only besides: during a CA rotation's
overlap the Job reads what every replica reports having loaded (the Deployments mounting the
identity Secrets, their Pods, and status.tls of the release's HAProxyTemplateConfig) to remove
the previous CA before its deadline once all of them converged.
*/}}
{{- define "haptic.agentTLS.renewRules" -}}
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["create"]
- apiGroups: [""]
  resources: ["secrets"]
  resourceNames:
    - {{ include "haptic.agentTLS.issuerSecretName" . | quote }}
    - {{ include "haptic.agentTLS.serverSecretName" . | quote }}
    - {{ include "haptic.agentTLS.clientSecretName" . | quote }}
  verbs: ["get", "update", "patch"]
- apiGroups: ["apps"]
  resources: ["deployments"]
  verbs: ["list"]
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["list"]
- apiGroups: ["haproxy-haptic.org"]
  resources: ["haproxytemplateconfigs"]
  resourceNames:
    - {{ include "haptic.templateConfig.name" . | quote }}
  verbs: ["get"]
{{- end -}}

{{/* cert-manager durations: lifetime in days → Go durations in hours. */}}
{{- define "haptic.agentTLS.identityDuration" -}}
{{- printf "%dh" (mul (int .Values.haproxy.agent.tls.certValidityDays) 24) -}}
{{- end -}}

{{/* 30 days before expiry; below 90 days of lifetime, one third of it (days × 24 h / 3). */}}
{{- define "haptic.agentTLS.identityRenewBefore" -}}
{{- $days := int .Values.haproxy.agent.tls.certValidityDays -}}
{{- if lt $days 90 -}}
{{- printf "%dh" (mul $days 8) -}}
{{- else -}}
720h
{{- end -}}
{{- end -}}

{{/*
The root CA lasts at least ten years and at least three identity lifetimes, and renews (with
the same key) two identity lifetimes before expiry, so every identity issued before the
renewal expires before the old root does.
*/}}
{{- define "haptic.agentTLS.rootDuration" -}}
{{- $days := int .Values.haproxy.agent.tls.certValidityDays -}}
{{- printf "%dh" (mul (max 3650 (mul $days 3)) 24) -}}
{{- end -}}

{{- define "haptic.agentTLS.rootRenewBefore" -}}
{{- printf "%dh" (mul (int .Values.haproxy.agent.tls.certValidityDays) 48) -}}
{{- end -}}

{{/* Webhook certificate source: "cert-manager", "external", "default" or "" (no webhook). */}}
{{- define "haptic.webhook.source" -}}
{{- $webhook := .Values.controller.webhook -}}
{{- if not $webhook.enabled -}}
{{- else if $webhook.certManager.enabled -}}cert-manager
{{- else if $webhook.secretName -}}external
{{- else -}}default
{{- end -}}
{{- end -}}

{{/* The default source has a Secret name of its own: providers change with Secret names. */}}
{{- define "haptic.webhook.secretName" -}}
{{- if eq (include "haptic.webhook.source" .) "default" -}}
{{- include "haptic.componentName" (list . "webhook-default-tls") -}}
{{- else -}}
{{- .Values.controller.webhook.secretName | default (include "haptic.componentName" (list . "webhook-tls")) -}}
{{- end -}}
{{- end -}}

{{/* Non-empty when the default frontend certificate comes from cert-manager. */}}
{{- define "haptic.defaultSSL.certManager" -}}
{{- $enabled := dig "certManager" "enabled" nil .Values.defaultSSLCertificate -}}
{{- if kindIs "bool" $enabled -}}
{{- if $enabled -}}true{{- end -}}
{{- else if .Values.controller.webhook.certManager.enabled -}}true
{{- end -}}
{{- end -}}

{{/* The default frontend certificate Secret, or "" when there is none. */}}
{{- define "haptic.defaultSSL.secretName" -}}
{{- if include "haptic.defaultSSL.certManager" . -}}
{{- .Values.defaultSSLCertificate.secretName | default (include "haptic.componentName" (list . "default-ssl-certificate")) -}}
{{- else -}}
{{- .Values.defaultSSLCertificate.secretName -}}
{{- end -}}
{{- end -}}

{{/* Non-empty when any chart object needs the shared self-signed cert-manager Issuer. */}}
{{- define "haptic.certManager.selfSignedIssuerNeeded" -}}
{{- if or (include "haptic.agentTLS.certManagerCreatesIssuer" .) (eq (include "haptic.webhook.source" .) "cert-manager") (include "haptic.defaultSSL.certManager" .) -}}true{{- end -}}
{{- end -}}

{{- define "haptic.certManager.selfSignedIssuerName" -}}
{{- include "haptic.componentName" (list . "selfsigned") -}}
{{- end -}}

{{/* Annotation value that rolls pods when the credentials Secret's *name* changes. */}}
{{- define "haptic.credentials.nameHash" -}}
{{- .Values.credentials.existingSecret | sha256sum | trunc 16 -}}
{{- end -}}
