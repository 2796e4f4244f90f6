{{/* The release's names and labels. */}}
{{- define "pykafkad.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "pykafkad.headless" -}}
{{- printf "%s-headless" (include "pykafkad.fullname" .) -}}
{{- end -}}

{{- define "pykafkad.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: pykafkad
{{- end -}}

{{- define "pykafkad.selectorLabels" -}}
app.kubernetes.io/name: pykafkad
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: broker
{{- end -}}

{{- define "pykafkad.zookeeper.fullname" -}}
{{- printf "%s-zookeeper" (include "pykafkad.fullname" .) -}}
{{- end -}}

{{- define "pykafkad.zookeeper.selectorLabels" -}}
app.kubernetes.io/name: zookeeper
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: zookeeper
{{- end -}}

{{/* zookeeper.connect: the chart's own ensemble, or the one named in values. */}}
{{- define "pykafkad.zookeeperConnect" -}}
{{- if .Values.zookeeper.enabled -}}
{{- $zk := include "pykafkad.zookeeper.fullname" . -}}
{{- $hosts := list -}}
{{- range $i := until (int .Values.zookeeper.replicaCount) -}}
{{- $hosts = append $hosts (printf "%s-%d.%s-headless.%s.svc.%s:2181" $zk $i $zk $.Release.Namespace $.Values.clusterDomain) -}}
{{- end -}}
{{- join "," $hosts -}}
{{- else -}}
{{- required "zookeeper.connect is needed when zookeeper.enabled is false" .Values.zookeeper.connect -}}
{{- end -}}
{{- end -}}

{{/* Whether the Kafka listener is secured, so that a second, internal one is needed. */}}
{{- define "pykafkad.secured" -}}
{{- if or .Values.security.tls.enabled .Values.security.sasl.enabled -}}true{{- end -}}
{{- end -}}

{{- define "pykafkad.clientProtocol" -}}
{{- if and .Values.security.tls.enabled .Values.security.sasl.enabled -}}SASL_SSL
{{- else if .Values.security.tls.enabled -}}SSL
{{- else if .Values.security.sasl.enabled -}}SASL_PLAINTEXT
{{- else -}}PLAINTEXT
{{- end -}}
{{- end -}}

{{- define "pykafkad.saslSecret" -}}
{{- default (printf "%s-sasl" (include "pykafkad.fullname" .)) .Values.security.sasl.existingSecret -}}
{{- end -}}
