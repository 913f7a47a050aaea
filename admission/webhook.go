package admission

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pkg/config/constants"
	"istio.io/istio/pkg/config/mesh"
	"istio.io/istio/pkg/config/mesh/meshwatcher"
	"istio.io/istio/pkg/kube"
	"istio.io/istio/pkg/kube/inject"
	"istio.io/istio/pkg/kube/multicluster"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/input"
)

// webhook is Istio's injection webhook on a mux, with a fake cluster of one node of the chosen
// Kubernetes version for its native-sidecar detection.
type webhook struct {
	mux  *http.ServeMux
	cfg  *inject.Config
	stop chan struct{}
	once sync.Once
}

type staticWatcher struct {
	cfg    *inject.Config
	values string
}

func (w staticWatcher) SetHandler(func(*inject.Config, string) error) {}
func (w staticWatcher) Run(<-chan struct{})                           {}
func (w staticWatcher) Get() (*inject.Config, string, error)          { return w.cfg, w.values, nil }

func newWebhook(in *engine.Install, node *corev1.Node) (*webhook, error) {
	cfg, err := inject.UnmarshalConfig([]byte(in.InjectorConfig))
	if err != nil {
		return nil, err
	}
	mc, err := mesh.ApplyMeshConfig(in.MeshConfigYAML, mesh.DefaultMeshConfig())
	if err != nil {
		return nil, err
	}
	var values struct {
		Revision string `json:"revision"`
	}
	_ = json.Unmarshal([]byte(in.Values), &values)
	// As istiod: the mesh config and the (empty) ProxyConfig resources merged per pod.
	store := model.NewFakeStore()
	env := &model.Environment{Watcher: meshwatcher.NewTestWatcher(mc), ConfigStore: store}
	env.SetPushContext(&model.PushContext{ProxyConfigs: model.GetProxyConfigs(store, mc)})
	multi := multicluster.NewFakeController()
	w := &webhook{mux: http.NewServeMux(), cfg: &cfg, stop: make(chan struct{})}
	if _, err := inject.NewWebhook(inject.WebhookParameters{
		Watcher: staticWatcher{cfg: &cfg, values: in.Values}, Env: env, Mux: w.mux,
		Revision: values.Revision, MultiCluster: multi,
	}); err != nil {
		return nil, err
	}
	// The node informer is registered (by NewWebhook's handler) before the client starts.
	client := kube.NewFakeClient(node)
	multi.Add(constants.DefaultClusterName, client, w.stop)
	client.RunAndWait(w.stop)
	return w, nil
}

func (w *webhook) close() { w.once.Do(func() { close(w.stop) }) }

// webhookRefusal is the webhook's answer refusing the Pod.
type webhookRefusal struct{ msg string }

func (e webhookRefusal) Error() string { return e.msg }

// call sends the Pod to the webhook as the API server does (an AdmissionReview of a CREATE) and
// applies its JSON patch. patched is false when the webhook allowed the Pod unchanged.
func (w *webhook) call(pod *corev1.Pod, namespace, path string, withDefaults bool) (*corev1.Pod, bool, error) {
	if path == "" {
		path = "/inject"
	}
	raw, err := json.Marshal(pod)
	if err != nil {
		return nil, false, err
	}
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:       types.UID("sidecarlab"),
			Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
			Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
			Name:      createdName(pod),
			Namespace: namespace,
			Operation: admissionv1.Create,
			Object:    runtime.RawExtension{Raw: raw},
		},
	}
	body, err := json.Marshal(review)
	if err != nil {
		return nil, false, err
	}
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	w.mux.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return nil, false, &input.Fault{ID: "webhook-status", Params: input.Params("code", strconv.Itoa(rec.Code), "body", strings.TrimSpace(rec.Body.String()))}
	}
	var answer admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
		return nil, false, &input.Fault{ID: "webhook-answer", Err: err}
	}
	resp := answer.Response
	if resp == nil {
		return nil, false, &input.Fault{ID: "webhook-no-response"}
	}
	if !resp.Allowed {
		msg := "refused"
		if resp.Result != nil && resp.Result.Message != "" {
			msg = resp.Result.Message
		}
		return nil, false, webhookRefusal{msg: msg}
	}
	if len(resp.Patch) == 0 {
		return pod, false, nil
	}
	patch, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		return nil, false, &input.Fault{ID: "webhook-patch", Err: err}
	}
	patchedJSON, err := patch.Apply(raw)
	if err != nil {
		return nil, false, &input.Fault{ID: "webhook-patch-apply", Err: err}
	}
	var out corev1.Pod
	if err := json.Unmarshal(patchedJSON, &out); err != nil {
		return nil, false, err
	}
	if withDefaults {
		defaulted(&out)
	}
	return &out, true, nil
}
