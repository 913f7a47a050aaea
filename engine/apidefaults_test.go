package engine

import (
	"strings"
	"testing"
)

// TestWebhookModeSeesAPIDefaults: webhook mode injects the object as the API server hands it to
// the webhook (defaulted), so what Istio writes from defaulted fields has them (a port's protocol,
// a probe's scheme and timeout), while the output leaves out the defaults Istio did not touch and
// keeps what the manifest wrote itself, even where it equals a default. kube-inject mode is
// istioctl's: as written.
func TestWebhookModeSeesAPIDefaults(t *testing.T) {
	e := testEngine(t)
	const deploy = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx
        imagePullPolicy: Always
        ports: [{containerPort: 8080}]
        readinessProbe:
          httpGet: {path: /ready, port: 8080}
      - name: side
        image: busybox
        terminationMessagePolicy: File
`
	webhook := mustInject(t, e, []byte(deploy), nil, Settings{Mode: ModeWebhook, KubernetesVersion: "1.34"}).Output()
	for _, want := range []string{
		`{"containerPort":8080,"protocol":"TCP"}`,                                    // ISTIO_META_POD_PORTS
		`"httpGet":{"path":"/ready","port":8080,"scheme":"HTTP"},"timeoutSeconds":1`, // ISTIO_KUBE_APP_PROBERS
		"imagePullPolicy: Always",                                                    // written, and the default's not Always here: kept
		"terminationMessagePolicy: File",                                             // written, equal to the default: kept
	} {
		if !strings.Contains(webhook, want) {
			t.Errorf("webhook mode lacks %q:\n%s", want, webhook)
		}
	}
	for _, untouched := range []string{"revisionHistoryLimit", "progressDeadlineSeconds", "dnsPolicy", "schedulerName", "terminationMessagePath", "scheme: HTTP", "successThreshold"} {
		if strings.Contains(webhook, untouched) {
			t.Errorf("webhook mode shows the API server's default %q, which Istio did not touch:\n%s", untouched, webhook)
		}
	}
	if _, after, _ := strings.Cut(webhook, "- containerPort: 8080\n"); strings.HasPrefix(strings.TrimSpace(after), "protocol") {
		t.Errorf("webhook mode shows the default protocol of the application's port:\n%s", webhook)
	}
	kube := mustInject(t, e, []byte(deploy), nil, Settings{}).Output()
	if !strings.Contains(kube, `{"containerPort":8080}`) || strings.Contains(kube, `"timeoutSeconds":1`) {
		t.Errorf("kube-inject mode should inject the manifest as written:\n%s", kube)
	}
}
