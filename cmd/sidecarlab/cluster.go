package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/sidecarlab/sidecarlab/clustermesh"
	"github.com/sidecarlab/sidecarlab/engine"
)

// clusterFlags name a live cluster to read the mesh from, as kubectl names one: --context and
// --kubeconfig (else KUBECONFIG, else ~/.kube/config), and where Istio's ConfigMaps are.
type clusterFlags struct {
	context, kubeconfig, istioNamespace string
}

func (f *clusterFlags) register(c *cli, cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.context, "context", "", c.T("cli.flag.context"))
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", c.T("cli.flag.kubeconfig"))
	fl.StringVarP(&f.istioNamespace, "istio-namespace", "i", clustermesh.DefaultIstioNamespace, c.T("cli.flag.istio_namespace"))
	_ = cmd.MarkFlagFilename("kubeconfig")
	_ = cmd.RegisterFlagCompletionFunc("context", cobra.NoFileCompletions)
}

// clusterReadTimeout bounds every request to the cluster's API server (rest.Config.Timeout).
const clusterReadTimeout = 20 * time.Second

// given reports whether a cluster is named.
func (f *clusterFlags) given() bool { return f.context != "" || f.kubeconfig != "" }

// reader is a clustermesh.Reader of the cluster the flags name, as kubectl finds it: with no
// kubeconfig at all, in a pod, the pod's own ServiceAccount (serve --cluster-read in the chart).
func (f *clusterFlags) reader(c *cli) (clustermesh.Reader, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: f.kubeconfig}
	where := "~/.kube/config"
	if env := c.getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
		rules.Precedence = filepath.SplitList(env)
		where = strings.Join(rules.Precedence, ", ") + " (" + clientcmd.RecommendedConfigPathEnvVar + ")"
	} else {
		rules.Precedence = []string{clientcmd.RecommendedHomeFile}
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: f.context}).ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		// client-go's own words name KUBERNETES_MASTER, which no kubectl user sets: say what
		// was looked for instead.
		return clustermesh.Reader{}, errors.New(c.T("cli.error.no_kubeconfig", "Where", where))
	}
	if err != nil {
		return clustermesh.Reader{}, err
	}
	if cfg.Timeout == 0 {
		// No read of the cluster waits longer than this, whatever its context (the discovery's
		// version read takes none): an API server that never answers costs a request this much.
		cfg.Timeout = clusterReadTimeout
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return clustermesh.Reader{}, err
	}
	return clustermesh.Reader{Client: client, IstioNamespace: f.istioNamespace}, nil
}

// read reads the mesh that injects Pods in namespace (see clustermesh.Reader.Read) and says on
// stderr which revision it read, and why.
func (f *clusterFlags) read(c *cli, namespace, revision string) (*clustermesh.Mesh, error) {
	r, err := f.reader(c)
	if err != nil {
		return nil, err
	}
	m, err := r.Read(c.ctx, namespace, revision)
	if err != nil {
		return nil, err
	}
	istio := m.Own.Istio
	if istio == "" {
		istio = "?"
	}
	fmt.Fprintln(c.stderr, "sidecarlab:", c.T("cli.cluster.read", "Revision", engine.RevisionName(m.Revision), "Via", c.words().RevisionChoice(m.Via),
		"Istio", istio, "Kubernetes", m.KubernetesVersion, "Embedded", engine.Version().Istio))
	return m, nil
}
