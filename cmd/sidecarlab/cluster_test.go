package main

// The test cluster: the Kubernetes control plane scripts/testenv.sh starts (controlplane/: etcd,
// kube-apiserver and kube-controller-manager 1.36.1 on 127.0.0.1), with Istio installed in it as
// the engine renders it and istiod running here, so that the conformance tests
// (conformance_test.go) can ask the real cluster what sidecarlab predicts.
//
// How Istio is installed, and why:
//   - Each revision is rendered by Istio's own installer (operator/pkg/render.GenerateManifest,
//     the function `istioctl manifest generate` and the engine call) with the install options
//     sidecarlab is then given for it. Everything it renders is applied (CRDs, ConfigMaps, RBAC,
//     Services, the webhook configurations, …) except what runs Pods (Deployment, DaemonSet,
//     HorizontalPodAutoscaler, PodDisruptionBudget): there are no nodes to run them.
//   - istiod runs here instead, as its Deployment says (its args and env, the env's field
//     references filled in), plus: --kubeconfig, every listener on a free port of 127.0.0.1, and
//     ISTIOD_CUSTOM_HOST=localhost so its self-signed serving certificate names localhost.
//   - The webhook configurations are the rendered ones with one change: where a webhook calls
//     the istiod Service (clientConfig.service), it calls https://localhost:PORT/PATH, that
//     istiod's webhook port, with the same path. This is what the chart itself renders for
//     values.istiodRemote.injectionURL; selectors, rules and policies are untouched. istiod
//     patches the caBundle in, as it does in a cluster.
//   - The cluster has one Node object of the Kubernetes version the tests give sidecarlab (Istio
//     decides on native sidecars by the nodes' kubelet versions); no kubelet runs, so Pods stay
//     Pending, which is all the tests need: admission happens before scheduling.
//
// Without SIDECARLAB_TEST_KUBECONFIG the conformance tests skip, unless
// SIDECARLAB_REQUIRE_CONTROLPLANE is set (scripts/testenv.sh sets it): then they fail.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"istio.io/istio/operator/pkg/render"

	"github.com/sidecarlab/sidecarlab/engine"
)

const (
	envKubeconfig      = "SIDECARLAB_TEST_KUBECONFIG"
	envControlPlaneBin = "SIDECARLAB_TEST_CONTROLPLANE_BIN"
	envRequire         = "SIDECARLAB_REQUIRE_CONTROLPLANE"
	// clusterKubernetes is the version of the control plane's programs (controlplane/go.mod).
	clusterKubernetes = "1.36"
)

// meshRevision is one Istio control plane revision of the test cluster, and the install options
// sidecarlab is given for it.
type meshRevision struct {
	name string
	set  []string
}

var (
	// revDefault is the default revision, with a revision tag "prod" (as `istioctl tag set prod
	// --revision default` makes it: the chart's revisionTags render the same webhook).
	revDefault = meshRevision{name: "default", set: []string{"values.revisionTags[0]=prod"}}
	// revCNI is a second revision, "cni", rendered with Istio CNI (its pods get istio-validation
	// instead of istio-init).
	revCNI = meshRevision{name: "cni", set: []string{"revision=cni", "components.cni.enabled=true"}}
)

func (r meshRevision) setFlags() []string {
	var out []string
	for _, s := range r.set {
		out = append(out, "--set", s)
	}
	return out
}

// testCluster is the running cluster: a client with the admin's rights, and the kubeconfig.
type testCluster struct {
	kubeconfig string
	cfg        *rest.Config
	client     kubernetes.Interface
}

var (
	clusterOnce  sync.Once
	theCluster   *testCluster
	clusterErr   error
	clusterProcs []*exec.Cmd
)

// needCluster returns the test cluster, installing Istio and starting istiod the first time.
func needCluster(t *testing.T) *testCluster {
	t.Helper()
	kubeconfig := os.Getenv(envKubeconfig)
	if kubeconfig == "" {
		if os.Getenv(envRequire) != "" {
			t.Fatalf("%s is set but %s is not: scripts/testenv.sh starts the control plane and sets it", envRequire, envKubeconfig)
		}
		t.Skipf("no test control plane (%s); `make test` starts one", envKubeconfig)
	}
	clusterOnce.Do(func() {
		theCluster, clusterErr = startCluster(kubeconfig, os.Getenv(envControlPlaneBin))
	})
	if clusterErr != nil {
		t.Fatal(clusterErr)
	}
	return theCluster
}

// stopCluster stops the istiods startCluster started (TestMain calls it).
func stopCluster() {
	for _, p := range clusterProcs {
		_ = p.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range clusterProcs {
		done := make(chan struct{})
		go func() { _, _ = p.Process.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = p.Process.Kill()
		}
	}
}

func startCluster(kubeconfig, bin string) (*testCluster, error) {
	if bin == "" {
		return nil, fmt.Errorf("%s: the directory of the control plane's programs (kubectl, pilot-discovery) is not set", envControlPlaneBin)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 200, 400
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c := &testCluster{kubeconfig: kubeconfig, cfg: cfg, client: client}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	node, err := engine.Settings{KubernetesVersion: clusterKubernetes}.Node()
	if err != nil {
		return nil, err
	}
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("node: %w", err)
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "istio-system"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "sidecarlab-istiod-")
	if err != nil {
		return nil, err
	}
	for i, rev := range []meshRevision{revDefault, revCNI} {
		if err := c.installRevision(ctx, rev, bin, filepath.Join(dir, rev.name), i == 0); err != nil {
			return nil, fmt.Errorf("revision %s: %w", rev.name, err)
		}
	}
	return c, nil
}

// installRevision renders the revision, applies what it renders (the base CRDs only when
// withBase), starts its istiod and waits until istiod serves and has patched its webhooks'
// caBundle.
func (c *testCluster) installRevision(ctx context.Context, rev meshRevision, bin, dir string, withBase bool) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	sets, _, err := render.GenerateManifest(nil, rev.set, false, nil, nil)
	if err != nil {
		return err
	}
	ports := map[string]string{}
	for _, name := range []string{"http", "https", "grpc", "secureGRPC", "monitoring", "ctrlz"} {
		a, err := freeLoopback()
		if err != nil {
			return err
		}
		ports[name] = a
	}
	webhookBase := "https://localhost:" + port(ports["https"])
	var docs []string
	var istiod *appsv1.Deployment
	for _, s := range sets {
		if s.Component == "Base" && !withBase {
			continue
		}
		for _, m := range s.Manifests {
			switch m.GetKind() {
			case "Deployment":
				if m.GetName() == "istiod" || m.GetName() == "istiod-"+rev.name {
					istiod = &appsv1.Deployment{}
					if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m.Object, istiod); err != nil {
						return err
					}
				}
				continue
			case "DaemonSet", "HorizontalPodAutoscaler", "PodDisruptionBudget":
				continue
			case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
				doc, err := toLocalWebhook(m.Content, webhookBase)
				if err != nil {
					return fmt.Errorf("%s %s: %w", m.GetKind(), m.GetName(), err)
				}
				docs = append(docs, doc)
				continue
			}
			docs = append(docs, m.Content)
		}
	}
	if istiod == nil {
		return errors.New("the render has no istiod Deployment")
	}
	manifest := filepath.Join(dir, "istio.yaml")
	if err := os.WriteFile(manifest, []byte(strings.Join(docs, "\n---\n")), 0o600); err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, filepath.Join(bin, "kubectl"), "--kubeconfig", c.kubeconfig,
		"apply", "--server-side", "--force-conflicts", "--field-manager", "sidecarlab-test", "-f", manifest).CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl apply -f %s: %v\n%s", manifest, err, out)
	}
	cmd, err := istiodCommand(istiod, filepath.Join(bin, "pilot-discovery"), dir, c.kubeconfig, ports)
	if err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(dir, "istiod.log"))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	clusterProcs = append(clusterProcs, cmd)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); logf.Close() }()
	return c.waitIstiod(ctx, rev, ports["http"], exited, logf.Name())
}

// toLocalWebhook is a rendered webhook configuration whose webhooks call the local istiod
// (base + the service's path) instead of the istiod Service.
func toLocalWebhook(doc, base string) (string, error) {
	var obj struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Webhooks          []map[string]any `json:"webhooks"`
	}
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		return "", err
	}
	for _, w := range obj.Webhooks {
		cc, _ := w["clientConfig"].(map[string]any)
		svc, ok := cc["service"].(map[string]any)
		if !ok {
			continue
		}
		path, _ := svc["path"].(string)
		delete(cc, "service")
		cc["url"] = base + path
	}
	out, err := yaml.Marshal(obj)
	return string(out), err
}

// istiodCommand runs pilot-discovery as the Deployment's container says, here.
func istiodCommand(d *appsv1.Deployment, exe, dir, kubeconfig string, ports map[string]string) (*exec.Cmd, error) {
	var ctr *corev1.Container
	for i := range d.Spec.Template.Spec.Containers {
		if d.Spec.Template.Spec.Containers[i].Name == "discovery" {
			ctr = &d.Spec.Template.Spec.Containers[i]
		}
	}
	if ctr == nil {
		return nil, errors.New("the istiod Deployment has no discovery container")
	}
	args := append([]string{}, ctr.Args...)
	args = append(args, "--kubeconfig", kubeconfig,
		"--httpAddr", ports["http"], "--httpsAddr", ports["https"], "--grpcAddr", ports["grpc"],
		"--secureGRPCAddr", ports["secureGRPC"], "--monitoringAddr", ports["monitoring"],
		"--ctrlz_port", port(ports["ctrlz"]))
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	for _, e := range ctr.Env {
		v := e.Value
		if e.ValueFrom != nil {
			switch {
			case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
				v = d.Name + "-local"
			case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
				v = d.Namespace
			case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "spec.serviceAccountName":
				v = d.Spec.Template.Spec.ServiceAccountName
			default:
				continue // resource limits (GOMAXPROCS, GOMEMLIMIT): this process has none
			}
		}
		env = append(env, e.Name+"="+v)
	}
	env = append(env, "ISTIOD_CUSTOM_HOST=localhost")
	cmd := exec.Command(exe, args...)
	cmd.Env, cmd.Dir = env, dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd, nil
}

// waitIstiod waits until istiod answers /ready and every webhook configuration of its revision
// has its caBundle.
func (c *testCluster) waitIstiod(ctx context.Context, rev meshRevision, httpAddr string, exited <-chan error, log string) error {
	hc := &http.Client{Timeout: 5 * time.Second}
	for {
		ready := false
		if resp, err := hc.Get("http://" + httpAddr + "/ready"); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			ready = resp.StatusCode == http.StatusOK
		}
		if ready {
			patched, err := c.webhooksPatched(ctx, rev)
			if err != nil {
				return err
			}
			if patched {
				return nil
			}
		}
		select {
		case err := <-exited:
			b, _ := os.ReadFile(log)
			return fmt.Errorf("istiod exited (%v); the end of its log:\n%s", err, tail(b, 4000))
		case <-ctx.Done():
			b, _ := os.ReadFile(log)
			return fmt.Errorf("istiod was not ready with its webhooks patched: %v; the end of its log:\n%s", ctx.Err(), tail(b, 4000))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (c *testCluster) webhooksPatched(ctx context.Context, rev meshRevision) (bool, error) {
	list, err := c.client.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{LabelSelector: "istio.io/rev=" + rev.name})
	if err != nil {
		return false, err
	}
	if len(list.Items) == 0 {
		return false, nil
	}
	for _, cfg := range list.Items {
		if !caBundles(cfg.Webhooks) {
			return false, nil
		}
	}
	return true, nil
}

func caBundles(hooks []admissionregistrationv1.MutatingWebhook) bool {
	for _, h := range hooks {
		if len(h.ClientConfig.CABundle) == 0 {
			return false
		}
	}
	return true
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		b = b[len(b)-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return b
}

func freeLoopback() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}
