{{/* Names, labels and the image, shared by every template. */}}

{{- define "workload-map.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "workload-map.fullname" -}}
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

{{- define "workload-map.selectorLabels" -}}
app.kubernetes.io/name: {{ include "workload-map.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "workload-map.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "workload-map.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: workload-map
{{- end -}}

{{- define "workload-map.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "workload-map.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- /* The local name `make image` tags is in no registry: a node can only run it side-loaded. */ -}}
{{- define "workload-map.image" -}}
{{- $image := .Values.image -}}
{{- if and (eq $image.repository "localhost/workload-map-operator") (ne $image.pullPolicy "Never") -}}
{{- fail "image.repository is localhost/workload-map-operator, the local name `make image` tags, which no registry serves. Push the image (skopeo copy oci-archive:dist/workload-map-operator-VERSION.oci.tar docker://REGISTRY/workload-map-operator:VERSION) and install with --set image.repository=REGISTRY/workload-map-operator, or load it into every node (kind load image-archive, ctr -n k8s.io images import) and install with --set image.pullPolicy=Never. See charts/workload-map/README.md." -}}
{{- end -}}
{{- if $image.digest -}}
{{- printf "%s@%s" $image.repository $image.digest -}}
{{- else -}}
{{- printf "%s:%s" $image.repository (default .Chart.AppVersion $image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "workload-map.webhookService" -}}
{{- printf "%s-webhook" (include "workload-map.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "workload-map.certSecret" -}}
{{- default (printf "%s-webhook-cert" (include "workload-map.fullname" .)) .Values.webhook.cert.secretName -}}
{{- end -}}

{{- define "workload-map.mutatingName" -}}
{{- printf "%s-mutating" (include "workload-map.fullname" .) -}}
{{- end -}}

{{- define "workload-map.validatingName" -}}
{{- printf "%s-validating" (include "workload-map.fullname" .) -}}
{{- end -}}

{{- define "workload-map.readerRole" -}}
{{- printf "%s-workload-reader" (include "workload-map.fullname" .) -}}
{{- end -}}

{{/* The caBundle to render: manual mode takes the value; auto mode keeps what the operator
     already patched in (lookup), so an upgrade does not blank it and break admission. */}}
{{- define "workload-map.caBundle" -}}
{{- $root := index . 0 -}}
{{- $kind := index . 1 -}}
{{- $name := index . 2 -}}
{{- if eq $root.Values.webhook.cert.provisionMode "manual" -}}
{{- $root.Values.webhook.cert.caBundle -}}
{{- else -}}
{{- $existing := lookup "admissionregistration.k8s.io/v1" $kind "" $name -}}
{{- if and $existing $existing.webhooks -}}
{{- (index $existing.webhooks 0).clientConfig.caBundle | default "" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- /* "true" when the Karta labels are stamped by a MutatingAdmissionPolicy instead of the
mutating webhook: webhook.labelPolicy true, or auto and the cluster serves the policy API
(helm install/upgrade see the cluster's kinds; helm template without --api-versions does not,
so it keeps the webhook, which works on every cluster). */ -}}
{{- define "workload-map.labelPolicy" -}}
{{- $mode := toString .Values.webhook.labelPolicy -}}
{{- if or (eq $mode "true") (and (eq $mode "auto") (.Capabilities.APIVersions.Has "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy")) -}}
true
{{- end -}}
{{- end -}}
