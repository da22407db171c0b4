{{/* Names: every object of this chart is <release>-<component>. */}}
{{- define "secop.fullname" -}}
{{- printf "%s-%s" .Release.Name "security-operator" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* A sibling component's object name (same release). */}}
{{- define "secop.sibling" -}}
{{- printf "%s-%s" .root.Release.Name .name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "secop.selectorLabels" -}}
app.kubernetes.io/name: security-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "secop.labels" -}}
{{ include "secop.selectorLabels" . }}
app.kubernetes.io/part-of: meshplane
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* global.<key>, or def when unset. */}}
{{- define "secop.global" -}}
{{- $g := .root.Values.global | default dict -}}
{{- if hasKey $g .key -}}{{- index $g .key -}}{{- else -}}{{- .default -}}{{- end -}}
{{- end -}}

{{/* image: registry/repository:tag[@digest]; registry and tag fall back to
global.image and then to ghcr.io/meshplane and the chart's appVersion. */}}
{{- define "secop.image" -}}
{{- $img := .image -}}
{{- $g := (.root.Values.global | default dict).image | default dict -}}
{{- $registry := $img.registry | default $g.registry | default "ghcr.io/meshplane" -}}
{{- $tag := $img.tag | default $g.tag | default .root.Chart.AppVersion -}}
{{- printf "%s/%s:%s" $registry $img.repository $tag -}}
{{- if $img.digest -}}@{{ $img.digest }}{{- end -}}
{{- end -}}

{{- define "secop.pullPolicy" -}}
{{- $g := (.root.Values.global | default dict).image | default dict -}}
{{- .image.pullPolicy | default $g.pullPolicy | default "IfNotPresent" -}}
{{- end -}}

{{- define "secop.imagePullSecrets" -}}
{{- $g := (.Values.global | default dict).image | default dict -}}
{{- $s := concat (.Values.imagePullSecrets | default list) ($g.pullSecrets | default list) -}}
{{- if $s }}
imagePullSecrets:
{{- range $s }}
  - name: {{ . }}
{{- end }}
{{- end -}}
{{- end -}}

{{/* The pod's securityContext: non-root (the images' user 65532), seccomp
RuntimeDefault; values.podSecurityContext is merged over it. */}}
{{- define "secop.podSecurityContext" -}}
{{- $d := dict "runAsNonRoot" true "runAsUser" 65532 "runAsGroup" 65532 "fsGroup" 65532 "seccompProfile" (dict "type" "RuntimeDefault") -}}
{{- toYaml (mergeOverwrite $d (.Values.podSecurityContext | default dict)) -}}
{{- end -}}

{{/* A container's securityContext: read-only root filesystem, no privilege
escalation, no capabilities. */}}
{{- define "secop.securityContext" -}}
{{- $d := dict "runAsNonRoot" true "allowPrivilegeEscalation" false "readOnlyRootFilesystem" true "capabilities" (dict "drop" (list "ALL")) "seccompProfile" (dict "type" "RuntimeDefault") -}}
{{- toYaml (mergeOverwrite $d (.Values.securityContext | default dict)) -}}
{{- end -}}

{{/* Scheduling fields shared by every pod of the chart. */}}
{{- define "secop.scheduling" -}}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- end -}}

{{/* Does the cluster serve ServiceMonitors (and do values want them)? */}}
{{- define "secop.serviceMonitor" -}}
{{- if and .Values.serviceMonitor.enabled (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor") -}}true{{- end -}}
{{- end -}}

{{/* OpenFGA's HTTP API: global.openfga.url, else the release's OpenFGA. */}}
{{- define "secop.openfgaURL" -}}
{{- $g := (.Values.global | default dict).openfga | default dict -}}
{{- $g.url | default (printf "http://%s-openfga.%s.svc:8080" .Release.Name .Release.Namespace) -}}
{{- end -}}

{{/* The Secret (name, key) of OpenFGA's preshared key. */}}
{{- define "secop.openfgaKeySecret" -}}
{{- $g := (.Values.global | default dict).openfga | default dict -}}
{{- $s := $g.keySecret | default dict -}}
{{- toJson (dict "name" ($s.name | default (printf "%s-openfga-key" .Release.Name)) "key" ($s.key | default "key")) -}}
{{- end -}}

{{/* An init container that copies OpenFGA's key into a memory volume as a
file of mode 0600 owned by the pod's user: the clients refuse a key file
others may read, and a Secret volume's files are group-readable. */}}
{{- define "secop.keyFileInit" -}}
- name: openfga-key
  image: {{ include "secop.image" (dict "root" . "image" .Values.keyFileImage) }}
  imagePullPolicy: {{ include "secop.pullPolicy" (dict "root" . "image" .Values.keyFileImage) }}
  args:
    - key-file
    - --from=/etc/meshplane/openfga-key/key
    - --to=/run/meshplane/openfga/key
  resources:
    requests: {cpu: 10m, memory: 16Mi}
    limits: {memory: 64Mi}
  securityContext:
    {{- include "secop.securityContext" . | nindent 4 }}
  volumeMounts:
    - name: openfga-key-secret
      mountPath: /etc/meshplane/openfga-key
      readOnly: true
    - name: openfga-key
      mountPath: /run/meshplane/openfga
{{- end -}}

{{- define "secop.keyFileVolumes" -}}
{{- $s := include "secop.openfgaKeySecret" . | fromJson -}}
- name: openfga-key-secret
  secret:
    secretName: {{ $s.name }}
    defaultMode: 0400
    items:
      - key: {{ $s.key }}
        path: key
- name: openfga-key
  emptyDir:
    medium: Memory
    sizeLimit: 1Mi
{{- end -}}
