{{/* Names: every object of this chart is <release>-<component>. */}}
{{- define "gql.fullname" -}}
{{- printf "%s-%s" .Release.Name "graphql-gateway" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* A sibling component's object name (same release). */}}
{{- define "gql.sibling" -}}
{{- printf "%s-%s" .root.Release.Name .name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "gql.selectorLabels" -}}
app.kubernetes.io/name: graphql-gateway
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "gql.labels" -}}
{{ include "gql.selectorLabels" . }}
app.kubernetes.io/part-of: meshplane
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* global.<key>, or def when unset. */}}
{{- define "gql.global" -}}
{{- $g := .root.Values.global | default dict -}}
{{- if hasKey $g .key -}}{{- index $g .key -}}{{- else -}}{{- .default -}}{{- end -}}
{{- end -}}

{{/* image: registry/repository:tag[@digest]; registry and tag fall back to
global.image and then to ghcr.io/meshplane and the chart's appVersion. */}}
{{- define "gql.image" -}}
{{- $img := .image -}}
{{- $g := (.root.Values.global | default dict).image | default dict -}}
{{- $registry := $img.registry | default $g.registry | default "ghcr.io/meshplane" -}}
{{- $tag := $img.tag | default $g.tag | default .root.Chart.AppVersion -}}
{{- printf "%s/%s:%s" $registry $img.repository $tag -}}
{{- if $img.digest -}}@{{ $img.digest }}{{- end -}}
{{- end -}}

{{- define "gql.pullPolicy" -}}
{{- $g := (.root.Values.global | default dict).image | default dict -}}
{{- .image.pullPolicy | default $g.pullPolicy | default "IfNotPresent" -}}
{{- end -}}

{{- define "gql.imagePullSecrets" -}}
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
{{- define "gql.podSecurityContext" -}}
{{- $d := dict "runAsNonRoot" true "runAsUser" 65532 "runAsGroup" 65532 "fsGroup" 65532 "seccompProfile" (dict "type" "RuntimeDefault") -}}
{{- toYaml (mergeOverwrite $d (.Values.podSecurityContext | default dict)) -}}
{{- end -}}

{{/* A container's securityContext: read-only root filesystem, no privilege
escalation, no capabilities. */}}
{{- define "gql.securityContext" -}}
{{- $d := dict "runAsNonRoot" true "allowPrivilegeEscalation" false "readOnlyRootFilesystem" true "capabilities" (dict "drop" (list "ALL")) "seccompProfile" (dict "type" "RuntimeDefault") -}}
{{- toYaml (mergeOverwrite $d (.Values.securityContext | default dict)) -}}
{{- end -}}

{{/* Scheduling fields shared by every pod of the chart. */}}
{{- define "gql.scheduling" -}}
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

