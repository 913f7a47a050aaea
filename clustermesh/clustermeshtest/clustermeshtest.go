// Package clustermeshtest is a cluster's Istio objects for tests of clustermesh.Reader on a fake
// client: two revisions installed as the engine renders them.
package clustermeshtest

import (
	"encoding/base64"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/sidecarlab/sidecarlab/engine"
)

// CanaryCPU is the proxy's CPU request of revision canary's values (the default's is Istio's).
const CanaryCPU = "50m"

// CABundle stands for the CA certificate istiod patches into its webhooks: high-entropy bytes,
// as a PEM's are.
var CABundle = func() []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 1200)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return []byte("-----BEGIN CERTIFICATE-----\n" + base64.StdEncoding.EncodeToString(b) + "\n-----END CERTIFICATE-----\n")
}()

// Installed renders two revisions as a cluster holds them: the default one with a tag prod,
// and canary with its proxy's CPU request CanaryCPU — their webhook configurations and their
// injector and mesh ConfigMaps in istio-system.
func Installed(t testing.TB, e *engine.Engine) []runtime.Object {
	t.Helper()
	var objs []runtime.Object
	for _, rev := range []struct {
		suffix string
		set    []string
	}{{"", []string{"values.revisionTags[0]=prod"}}, {"-canary", []string{"revision=canary", "values.global.proxy.resources.requests.cpu=" + CanaryCPU}}} {
		in, err := e.Install(t.Context(), engine.InstallOptions{Set: rev.set})
		if err != nil {
			t.Fatal(err)
		}
		configs, err := in.WebhookConfigurations()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range configs {
			c = c.DeepCopy()
			for i := range c.Webhooks {
				c.Webhooks[i].ClientConfig.CABundle = CABundle
			}
			objs = append(objs, c)
		}
		meta := metav1.ObjectMeta{Namespace: "istio-system", Labels: map[string]string{"istio.io/rev": "default"}}
		if rev.suffix != "" {
			meta.Labels["istio.io/rev"] = rev.suffix[1:]
		}
		injector, mesh := meta, meta
		injector.Name, mesh.Name = "istio-sidecar-injector"+rev.suffix, "istio"+rev.suffix
		objs = append(objs,
			&corev1.ConfigMap{ObjectMeta: injector, Data: map[string]string{"config": in.InjectorConfig, "values": in.Values}},
			&corev1.ConfigMap{ObjectMeta: mesh, Data: map[string]string{"mesh": in.MeshConfigYAML}})
	}
	return objs
}
