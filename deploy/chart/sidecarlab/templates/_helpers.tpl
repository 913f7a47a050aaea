{{- define "sidecarlab.name" -}}{{ .Release.Name | trunc 63 | trimSuffix "-" }}{{- end -}}
{{- define "sidecarlab.labels" -}}
app.kubernetes.io/name: sidecarlab
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}
{{- define "sidecarlab.selector" -}}
app.kubernetes.io/name: sidecarlab
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
