{{- /*
The config-check container (`haptic sandbox serve`): every `haproxy -c` of rendered, hostile
configuration runs here, never in the controller or the agent. It holds nothing worth
stealing: its own user (sandbox.runAsUser), a read-only root, no ServiceAccount token (the Pod
mounts none by default), no Secret volume, no environment, its own /tmp; the controller or
agent reaches it over the socket in the shared check-socket emptyDir (mode 0660, group fsGroup).
No network either: the container shares the Pod's network, so each haproxy -c runs under
haptic-no-network, a seccomp filter that fails connect, send, bind, listen and accept: no name
HAProxy parses is sent to a DNS server, nothing is connected to (src/sandbox/network-isolation.ts).
A network namespace of its own is not possible here: unshare needs CAP_SYS_ADMIN under the
RuntimeDefault seccomp profile.
A native sidecar, so it answers before the container that calls it starts.
*/ -}}
{{- define "haptic.configCheck.socket" -}}
/run/haptic-check/check.sock
{{- end -}}

{{- define "haptic.configCheck.container" -}}
- name: config-check
  restartPolicy: Always
  image: {{ include "haptic.image" . | quote }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  command: ["/usr/local/bin/haptic"]
  args:
    - sandbox
    - serve
    - --socket={{ include "haptic.configCheck.socket" . }}
    - --time-limit={{ .Values.sandbox.timeLimitSeconds }}
    - --memory-limit={{ .Values.sandbox.memoryLimitMiB }}
    - --max-concurrent={{ .Values.sandbox.maxConcurrent }}
    - --network-isolation=seccomp
  startupProbe:
    exec:
      command: ["/usr/local/bin/haptic", "sandbox", "health", "--socket={{ include "haptic.configCheck.socket" . }}"]
    periodSeconds: 1
    failureThreshold: 60
  livenessProbe:
    exec:
      command: ["/usr/local/bin/haptic", "sandbox", "health", "--socket={{ include "haptic.configCheck.socket" . }}"]
    periodSeconds: 10
    timeoutSeconds: 5
    failureThreshold: 3
  securityContext:
    {{- include "haptic.containerSecurityContext" . | nindent 4 }}
    runAsUser: {{ .Values.sandbox.runAsUser }}
    runAsGroup: {{ .Values.sandbox.runAsUser }}
  resources:
    {{- toYaml .Values.sandbox.resources | nindent 4 }}
  volumeMounts:
    - name: check-socket
      mountPath: /run/haptic-check
    - name: check-tmp
      mountPath: /tmp
{{- end -}}

{{- /* The Pod volumes the config-check container uses. */ -}}
{{- define "haptic.configCheck.volumes" -}}
# The check sandbox's socket, shared with the container that calls it.
- name: check-socket
  emptyDir:
    sizeLimit: 1Mi
# The check sandbox's own scratch space: one private directory per check.
- name: check-tmp
  emptyDir:
    sizeLimit: 512Mi
{{- end -}}
