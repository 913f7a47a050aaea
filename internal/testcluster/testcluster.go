// Package testcluster installs Istio, as the engine renders it, into a Kubernetes control plane
// that controlplane/'s launcher started, and runs istiod for it here: the cluster sidecarlab's
// conformance tests (cmd/sidecarlab/conformance_test.go) ask, and `make controlplane` starts for
// people to poke (its command is meshup).
//
// How Istio is installed, and why:
//   - Each revision (Revisions) is rendered by Istio's own installer
//     (operator/pkg/render.GenerateManifest, the function `istioctl manifest generate` and the
//     engine call) with the install options sidecarlab is given for it. Everything it renders is
//     applied with kubectl (CRDs, ConfigMaps, RBAC, Services, the webhook configurations, …)
//     except what runs Pods (Deployment, DaemonSet, HorizontalPodAutoscaler,
//     PodDisruptionBudget): no kubelet runs them.
//   - istiod runs here instead, as its Deployment says (its args and env, the env's field
//     references filled in), plus: --kubeconfig, every listener on a free port of 127.0.0.1, and
//     ISTIOD_CUSTOM_HOST=localhost so that its self-signed serving certificate names localhost.
//   - The webhook configurations are the rendered ones with one change: where a webhook calls
//     the istiod Service (clientConfig.service), it calls https://localhost:PORT/PATH, that
//     istiod's webhook port, with the same path. This is what the chart itself renders for
//     values.istiodRemote.injectionURL; selectors, rules and policies are untouched. istiod
//     patches the caBundle in, as it does in a cluster.
//   - The cluster has one Node object of KubernetesVersion (Istio decides on native sidecars by
//     the nodes' kubelet versions); no kubelet runs, so Pods stay Pending, which is all the tests
//     need: admission happens before scheduling.
package testcluster

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
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"istio.io/istio/operator/pkg/render"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/engine"
)

// KubernetesVersion is the version of the control plane's programs (controlplane/go.mod), and of
// the cluster's Node.
const KubernetesVersion = admission.CheckedKubernetes

// Revision is one Istio control plane revision of the cluster, and the install options sidecarlab
// is given for it.
type Revision struct {
	Name string
	Set  []string
}

var (
	// Default is the default revision, with a revision tag "prod" (as `istioctl tag set prod
	// --revision default` makes it: the chart's revisionTags render the same webhook).
	Default = Revision{Name: "default", Set: []string{"values.revisionTags[0]=prod"}}
	// CNI is a second revision, "cni", rendered with Istio CNI (its Pods get istio-validation
	// instead of istio-init).
	CNI = Revision{Name: "cni", Set: []string{"revision=cni", "components.cni.enabled=true"}}
	// Revisions are what Install installs, in order (the base CRDs with the first).
	Revisions = []Revision{Default, CNI}
)

// Mesh is Istio installed in a cluster, with its istiods running.
type Mesh struct {
	kubeconfig string
	client     kubernetes.Interface
	procs      []istiodProcess
	dir        string
	died       chan struct{} // closed when an istiod exits
	dieOnce    sync.Once
}

// Died is closed when one of the istiods has exited (Stop, or on its own: see its log,
// istiod.log in the revision's directory).
func (m *Mesh) Died() <-chan struct{} { return m.died }

// istiodProcess is a running istiod; done is closed when it has exited.
type istiodProcess struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// Install installs Revisions into the cluster of kubeconfig and starts their istiods
// (bin/pilot-discovery; bin/kubectl applies the objects), their files and logs in dir. It waits
// until each istiod is ready and has patched its webhooks. Stop stops the istiods.
func Install(ctx context.Context, kubeconfig, bin, dir string) (*Mesh, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	m := &Mesh{kubeconfig: kubeconfig, client: client, dir: dir, died: make(chan struct{})}
	minor, err := engine.Settings{KubernetesVersion: KubernetesVersion}.KubernetesMinor()
	if err != nil {
		return nil, err
	}
	if _, err := client.CoreV1().Nodes().Create(ctx, engine.Node(minor), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("node: %w", err)
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "istio-system"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	for i, rev := range Revisions {
		if err := m.installRevision(ctx, rev, bin, filepath.Join(dir, rev.Name), i == 0); err != nil {
			m.Stop()
			return nil, fmt.Errorf("revision %s: %w", rev.Name, err)
		}
	}
	return m, nil
}

// Stop stops the istiods (TERM, then KILL after 10 s).
func (m *Mesh) Stop() {
	for _, p := range m.procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range m.procs {
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	m.procs = nil
}

// Installed says whether the cluster has the mesh Install makes: every revision's webhook
// configurations, with their caBundles patched in by a running istiod.
func Installed(ctx context.Context, client kubernetes.Interface) (bool, error) {
	for _, rev := range Revisions {
		ok, err := webhooksPatched(ctx, client, rev)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// installRevision renders the revision, applies what it renders (the base CRDs only when
// withBase), starts its istiod and waits until istiod serves and has patched its webhooks'
// caBundle.
func (m *Mesh) installRevision(ctx context.Context, rev Revision, bin, dir string, withBase bool) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	sets, _, err := render.GenerateManifest(nil, rev.Set, false, nil, nil)
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
		for _, man := range s.Manifests {
			switch man.GetKind() {
			case "Deployment":
				if man.GetName() == "istiod" || man.GetName() == "istiod-"+rev.Name {
					istiod = &appsv1.Deployment{}
					if err := runtime.DefaultUnstructuredConverter.FromUnstructured(man.Object, istiod); err != nil {
						return err
					}
				}
				continue
			case "DaemonSet", "HorizontalPodAutoscaler", "PodDisruptionBudget":
				continue
			case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
				doc, err := toLocalWebhook(man.Content, webhookBase)
				if err != nil {
					return fmt.Errorf("%s %s: %w", man.GetKind(), man.GetName(), err)
				}
				docs = append(docs, doc)
				continue
			}
			docs = append(docs, man.Content)
		}
	}
	if istiod == nil {
		return errors.New("the render has no istiod Deployment")
	}
	manifest := filepath.Join(dir, "istio.yaml")
	if err := os.WriteFile(manifest, []byte(strings.Join(docs, "\n---\n")), 0o600); err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, filepath.Join(bin, "kubectl"), "--kubeconfig", m.kubeconfig,
		"apply", "--server-side", "--force-conflicts", "--field-manager", "sidecarlab-test", "-f", manifest).CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl apply -f %s: %v\n%s", manifest, err, out)
	}
	cmd, err := istiodCommand(istiod, filepath.Join(bin, "pilot-discovery"), dir, m.kubeconfig, ports)
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
	p := istiodProcess{cmd: cmd, done: make(chan struct{})}
	m.procs = append(m.procs, p)
	exited := make(chan error, 1)
	go func() {
		exited <- cmd.Wait()
		logf.Close()
		close(p.done)
		m.dieOnce.Do(func() { close(m.died) })
	}()
	return m.waitIstiod(ctx, rev, ports["http"], exited, logf.Name())
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
func (m *Mesh) waitIstiod(ctx context.Context, rev Revision, httpAddr string, exited <-chan error, log string) error {
	hc := &http.Client{Timeout: 5 * time.Second}
	for {
		ready := false
		if resp, err := hc.Get("http://" + httpAddr + "/ready"); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			ready = resp.StatusCode == http.StatusOK
		}
		if ready {
			patched, err := webhooksPatched(ctx, m.client, rev)
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

func webhooksPatched(ctx context.Context, client kubernetes.Interface, rev Revision) (bool, error) {
	list, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{LabelSelector: "istio.io/rev=" + rev.Name})
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
