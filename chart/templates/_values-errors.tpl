{{/*
The one place that collects value errors the schema cannot express (relations between keys).
Every rule appends a full sentence naming the keys and the fix; all errors are reported
together in one `fail`, so `helm template`, `helm install` and `haptic preflight` show the
complete list at once. values.schema.json handles types, ranges and unknown keys.
*/}}
{{- define "haptic.valuesErrors" -}}
{{- $errors := list -}}
{{- $tls := .Values.haproxy.agent.tls -}}
{{- $cm := $tls.certManager -}}
{{- $provider := include "haptic.agentTLS.provider" . -}}

{{- /* Another HAProxy image must run the HAProxy build the configuration check runs. */ -}}
{{- $hx := .Values.haproxy.image -}}
{{- $checked := index .Chart.Annotations "haptic.haproxy.org/haproxy-version" -}}
{{- if and $hx.repository (ne $hx.haproxyVersion $checked) -}}
{{- $errors = append $errors (printf "haproxy.image.repository is %q, but the configuration check runs HAProxy %s (the haptic image's): set haproxy.image.haproxyVersion to %q once that image runs exactly that build (haproxy -v), or leave haproxy.image.repository empty to run the haptic image's HAProxy; otherwise a configuration the check accepts may not load on the data plane, or the reverse." $hx.repository $checked $checked) -}}
{{- end -}}

{{- /* Legacy Basic authentication needs credentials the chart never invents. */ -}}
{{- if and (eq $provider "legacy") (not .Values.credentials.existingSecret) -}}
{{- $errors = append $errors "haproxy.agent.tls.enabled is false (legacy Basic authentication), which requires credentials.existingSecret: create a Secret with the keys dataplane_username and dataplane_password and set its name there; the chart never generates passwords." -}}
{{- end -}}

{{- if $tls.enabled -}}
{{- /* External identities: both names, and no second provider. */ -}}
{{- if not $tls.managed -}}
{{- if not $tls.serverSecretName -}}
{{- $errors = append $errors "haproxy.agent.tls.serverSecretName is required when haproxy.agent.tls.managed is false: name the Secret that holds the agent identity (tls.crt, tls.key, ca.crt)." -}}
{{- end -}}
{{- if not $tls.clientSecretName -}}
{{- $errors = append $errors "haproxy.agent.tls.clientSecretName is required when haproxy.agent.tls.managed is false: name the Secret that holds the controller identity (tls.crt, tls.key, ca.crt)." -}}
{{- end -}}
{{- if $cm.enabled -}}
{{- $errors = append $errors "haproxy.agent.tls.managed is false (external identities) but haproxy.agent.tls.certManager.enabled is true: choose one provider; set certManager.enabled to false to supply your own Secrets, or managed to true to let cert-manager issue them." -}}
{{- end -}}
{{- end -}}

{{- /* cert-manager with an existing issuer needs a complete issuerRef. */ -}}
{{- if $cm.enabled -}}
{{- if $cm.createIssuer -}}
{{- if $cm.issuerRef.name -}}
{{- $errors = append $errors (printf "haproxy.agent.tls.certManager.issuerRef.name is %q but haproxy.agent.tls.certManager.createIssuer is true: set createIssuer to false to use that issuer, or remove issuerRef.name to let the chart create one." $cm.issuerRef.name) -}}
{{- end -}}
{{- else -}}
{{- range $field := list "name" "kind" "group" -}}
{{- if not (index $cm.issuerRef $field) -}}
{{- $errors = append $errors (printf "haproxy.agent.tls.certManager.issuerRef.%s is required when haproxy.agent.tls.certManager.createIssuer is false: give the %s of your existing issuer." $field $field) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- /* An agent certificate must never authorise a controller operation. */ -}}
{{- if eq $tls.serverName $tls.clientName -}}
{{- $errors = append $errors (printf "haproxy.agent.tls.serverName and haproxy.agent.tls.clientName must differ (both are %q): an agent certificate must never authorise a controller operation." $tls.serverName) -}}
{{- end -}}
{{- end -}}

{{- /* The webhook certificate comes from exactly one source. */ -}}
{{- $webhook := .Values.controller.webhook -}}
{{- if $webhook.caBundle -}}
{{- if $webhook.certManager.enabled -}}
{{- $errors = append $errors "controller.webhook.caBundle is set but controller.webhook.certManager.enabled is true: cert-manager injects the CA bundle; remove caBundle." -}}
{{- else if not $webhook.secretName -}}
{{- $errors = append $errors "controller.webhook.caBundle is set without controller.webhook.secretName: name the Secret that holds the webhook certificate (tls.crt, tls.key)." -}}
{{- end -}}
{{- if and (not $webhook.certManager.enabled) (not (contains "-----BEGIN CERTIFICATE-----" (b64dec $webhook.caBundle))) -}}
{{- $errors = append $errors "controller.webhook.caBundle must be a base64-encoded PEM certificate bundle, for example the output of `base64 -w0 webhook-ca.crt`." -}}
{{- end -}}
{{- else if and $webhook.secretName (not $webhook.certManager.enabled) -}}
{{- $errors = append $errors "controller.webhook.caBundle is required with an external controller.webhook.secretName: set it to the base64-encoded PEM CA that signed the webhook certificate, or enable controller.webhook.certManager." -}}
{{- end -}}
{{- if and $webhook.clientAuth.caSecretName (not (include "haptic.webhook.source" .)) -}}
{{- $errors = append $errors "controller.webhook.clientAuth.caSecretName is set but no webhook is served (controller.webhook.enabled is false): enable the webhook, or remove clientAuth.caSecretName." -}}
{{- end -}}

{{- /* A disruption budget names one bound, and one that lets a node drain evict a Pod. */ -}}
{{- range $group := list "controller" "haproxy" -}}
{{- $values := index $.Values $group -}}
{{- $budget := $values.podDisruptionBudget -}}
{{- $min := $budget.minAvailable -}}
{{- $max := $budget.maxUnavailable -}}
{{- if $budget.enabled -}}
{{- if and (kindIs "invalid" $min) (kindIs "invalid" $max) -}}
{{- $errors = append $errors (printf "%s.podDisruptionBudget sets neither minAvailable nor maxUnavailable: set one of them, or set enabled to false." $group) -}}
{{- else if not (or (kindIs "invalid" $min) (kindIs "invalid" $max)) -}}
{{- $errors = append $errors (printf "%s.podDisruptionBudget sets both minAvailable and maxUnavailable: a PodDisruptionBudget takes one; set the other to null." $group) -}}
{{- else if gt (int $values.replicas) 1 -}}
{{- /* Kubernetes rounds percentages up: minAvailable p% keeps ceil(p * replicas / 100). */ -}}
{{- $replicas := int $values.replicas -}}
{{- $bound := ternary (printf "maxUnavailable is %v" $max) (printf "minAvailable is %v" $min) (kindIs "invalid" $min) -}}
{{- $blocks := eq (int (trimSuffix "%" (toString $max))) 0 -}}
{{- if not (kindIs "invalid" $min) -}}
{{- $percentBlocks := gt (mul (int (trimSuffix "%" (toString $min))) $replicas) (mul 100 (sub $replicas 1)) -}}
{{- $blocks = ternary $percentBlocks (ge (int $min) $replicas) (kindIs "string" $min) -}}
{{- end -}}
{{- if $blocks -}}
{{- $errors = append $errors (printf "%s.podDisruptionBudget.%s, which allows no eviction of the %d replicas: the budget would block every node drain; allow at least one Pod to be evicted, for example with minAvailable %d." $group $bound $replicas (sub $replicas 1)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- /* The HAProxy Service's knobs exist only for the types that have them. */ -}}
{{- $service := .Values.haproxy.service -}}
{{- if and (eq $service.type "ClusterIP") (or (not (kindIs "invalid" $service.nodePorts.http)) (not (kindIs "invalid" $service.nodePorts.https))) -}}
{{- $errors = append $errors "haproxy.service.nodePorts is set but haproxy.service.type is ClusterIP, which has no node ports: set type to NodePort or LoadBalancer, or set the nodePorts to null." -}}
{{- end -}}
{{- if and (eq $service.type "ClusterIP") $service.externalTrafficPolicy -}}
{{- $errors = append $errors "haproxy.service.externalTrafficPolicy is set but haproxy.service.type is ClusterIP, which takes no external traffic: set type to NodePort or LoadBalancer, or remove externalTrafficPolicy." -}}
{{- end -}}
{{- if ne $service.type "LoadBalancer" -}}
{{- range $key := list "loadBalancerClass" "loadBalancerSourceRanges" -}}
{{- if index $service $key -}}
{{- $errors = append $errors (printf "haproxy.service.%s is set but haproxy.service.type is %s: it applies to type LoadBalancer only; set the type or remove %s." $key $service.type $key) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- /* The drain delay leaves time to finish requests within the grace period. */ -}}
{{- if ge (int .Values.haproxy.drain.delaySeconds) (int .Values.haproxy.terminationGracePeriodSeconds) -}}
{{- $errors = append $errors (printf "haproxy.drain.delaySeconds (%v) must be less than haproxy.terminationGracePeriodSeconds (%v): the kubelet stops HAProxy at the end of the grace period, leaving no time to finish requests in flight; raise terminationGracePeriodSeconds." .Values.haproxy.drain.delaySeconds .Values.haproxy.terminationGracePeriodSeconds) -}}
{{- end -}}

{{- /* Each Secret has exactly one owner. */ -}}
{{- $owners := list -}}
{{- if $tls.enabled -}}
{{- if include "haptic.agentTLS.hasIssuerSecret" . -}}
{{- $owners = append $owners (list "haproxy.agent.tls.issuerSecretName" (include "haptic.agentTLS.issuerSecretName" .)) -}}
{{- end -}}
{{- $owners = append $owners (list "haproxy.agent.tls.serverSecretName" (include "haptic.agentTLS.serverSecretName" .)) -}}
{{- $owners = append $owners (list "haproxy.agent.tls.clientSecretName" (include "haptic.agentTLS.clientSecretName" .)) -}}
{{- end -}}
{{- $owners = append $owners (list "credentials.existingSecret" .Values.credentials.existingSecret) -}}
{{- if include "haptic.webhook.source" . -}}
{{- $owners = append $owners (list "controller.webhook.secretName" (include "haptic.webhook.secretName" .)) -}}
{{- end -}}
{{- if eq (include "haptic.webhook.source" .) "cert-manager" -}}
{{- $owners = append $owners (list "the chart's webhook CA (controller.webhook.certManager)" (include "haptic.componentName" (list . "webhook-ca"))) -}}
{{- end -}}
{{- $owners = append $owners (list "defaultSSLCertificate.secretName" (include "haptic.defaultSSL.secretName" .)) -}}
{{- range $i, $a := $owners -}}
{{- range $j, $b := $owners -}}
{{- if and (lt $i $j) (index $a 1) (eq (index $a 1) (index $b 1)) -}}
{{- $errors = append $errors (printf "%s and %s both name Secret %q: each Secret has exactly one owner; give them different names." (index $a 0) (index $b 0) (index $a 1)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- toJson $errors -}}
{{- end -}}

{{- define "haptic.validateValues" -}}
{{- $errors := include "haptic.valuesErrors" . | fromJsonArray -}}
{{- if $errors -}}
{{- fail (printf "invalid values for release %q:\n- %s" .Release.Name (join "\n- " $errors)) -}}
{{- end -}}
{{- end -}}
