{{/* Names: every object of this chart is <release>-<component>. */}}
{{- define "core.fullname" -}}
{{- printf "%s-%s" .Release.Name "core" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* A sibling component's object name (same release). */}}
{{- define "core.sibling" -}}
{{- printf "%s-%s" .root.Release.Name .name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "core.selectorLabels" -}}
app.kubernetes.io/name: core
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "core.labels" -}}
{{ include "core.selectorLabels" . }}
app.kubernetes.io/part-of: meshplane
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* global.<key>, or def when unset. */}}
{{- define "core.global" -}}
{{- $g := .root.Values.global | default dict -}}
{{- if hasKey $g .key -}}{{- index $g .key -}}{{- else -}}{{- .default -}}{{- end -}}
{{- end -}}

{{/* image: registry/repository:tag[@digest]; registry and tag fall back to
global.image and then to ghcr.io/meshplane and the chart's appVersion. */}}
{{- define "core.image" -}}
{{- $img := .image -}}
{{- $g := (.root.Values.global | default dict).image | default dict -}}
{{- $registry := $img.registry | default $g.registry | default "ghcr.io/meshplane" -}}
{{- $tag := $img.tag | default $g.tag | default .root.Chart.AppVersion -}}
{{- printf "%s/%s:%s" $registry $img.repository $tag -}}
{{- if $img.digest -}}@{{ $img.digest }}{{- end -}}
{{- end -}}

{{- define "core.pullPolicy" -}}
{{- $g := (.root.Values.global | default dict).image | default dict -}}
{{- .image.pullPolicy | default $g.pullPolicy | default "IfNotPresent" -}}
{{- end -}}

{{- define "core.imagePullSecrets" -}}
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
{{- define "core.podSecurityContext" -}}
{{- $d := dict "runAsNonRoot" true "runAsUser" 65532 "runAsGroup" 65532 "fsGroup" 65532 "seccompProfile" (dict "type" "RuntimeDefault") -}}
{{- toYaml (mergeOverwrite $d (.Values.podSecurityContext | default dict)) -}}
{{- end -}}

{{/* A container's securityContext: read-only root filesystem, no privilege
escalation, no capabilities. */}}
{{- define "core.securityContext" -}}
{{- $d := dict "runAsNonRoot" true "allowPrivilegeEscalation" false "readOnlyRootFilesystem" true "capabilities" (dict "drop" (list "ALL")) "seccompProfile" (dict "type" "RuntimeDefault") -}}
{{- toYaml (mergeOverwrite $d (.Values.securityContext | default dict)) -}}
{{- end -}}

{{/* Scheduling fields shared by every pod of the chart. */}}
{{- define "core.scheduling" -}}
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
{{- define "core.serviceMonitor" -}}
{{- if and .Values.serviceMonitor.enabled (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor") -}}true{{- end -}}
{{- end -}}

{{/* The shard count: values.shards, else global.shards, else 1. */}}
{{- define "core.shardCount" -}}
{{- $n := .Values.shards -}}
{{- if kindIs "invalid" $n -}}{{- $n = (.Values.global | default dict).shards | default 1 -}}{{- end -}}
{{- int $n -}}
{{- end -}}

{{/* Shard names, as a JSON list: root, b, c, ... */}}
{{- define "core.shardNames" -}}
{{- $n := int (include "core.shardCount" .) -}}
{{- $names := list "root" -}}
{{- $letters := splitList "" "bcdefghijklmnopqrstuvwxyz" -}}
{{- range $i, $l := $letters -}}{{- if lt (add $i 1) $n -}}{{- $names = append $names $l -}}{{- end -}}{{- end -}}
{{- toJson $names -}}
{{- end -}}

{{/* A shard's object name: <release>-core for root, <release>-core-<name> else. */}}
{{- define "core.shardName" -}}
{{- if eq .shard "root" -}}{{ include "core.fullname" .root }}{{- else -}}{{ printf "%s-%s" (include "core.fullname" .root) .shard | trunc 63 }}{{- end -}}
{{- end -}}

{{- define "core.serviceFQDN" -}}
{{- printf "%s.%s.svc.%s" .name .root.Release.Namespace (include "core.global" (dict "root" .root "key" "clusterDomain" "default" "cluster.local")) -}}
{{- end -}}

{{- define "core.sharded" -}}
{{- if gt (int (include "core.shardCount" .)) 1 -}}true{{- end -}}
{{- end -}}

{{- define "core.frontProxyName" -}}
{{- printf "%s-front-proxy" .Release.Name | trunc 63 -}}
{{- end -}}

{{/* The URL clients reach workspaces at: the front proxy when sharded. */}}
{{- define "core.externalURL" -}}
{{- if include "core.sharded" . -}}
{{- $h := .Values.frontProxy.externalHostname | default (printf "%s:%v" (include "core.serviceFQDN" (dict "root" . "name" (include "core.frontProxyName" .))) .Values.frontProxy.service.port) -}}
https://{{ $h }}
{{- else -}}
{{- $h := .Values.externalHostname | default (printf "%s:%v" (include "core.serviceFQDN" (dict "root" . "name" (include "core.fullname" .))) .Values.service.port) -}}
https://{{ $h }}
{{- end -}}
{{- end -}}
