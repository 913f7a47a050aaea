package catalog

import (
	"errors"
	"strings"
	"testing"

	"istio.io/api/annotation"

	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/yamldoc"

	"istio.io/istio/pkg/kube/inject"
)

func TestCatalogCoversIstio(t *testing.T) {
	c := DefaultCatalog()
	want := 0
	for _, in := range annotation.AllResourceAnnotations() {
		if !appliesToPods(in) {
			if _, ok := c.Lookup(in.Name); ok {
				t.Errorf("%s does not apply to pods but is in the catalog", in.Name)
			}
			continue
		}
		want++
		a, ok := c.Lookup(in.Name)
		if !ok {
			t.Errorf("%s is missing", in.Name)
			continue
		}
		if a.Description == "" || a.FeatureStatus == "" || a.Deprecated != in.Deprecated || a.Hidden != in.Hidden {
			t.Errorf("%s: %+v does not carry Istio's entry", in.Name, a)
		}
	}
	if len(c.All()) != want || want < 40 {
		t.Fatalf("catalog has %d annotations, Istio %d", len(c.All()), want)
	}
	for name := range typings {
		if _, ok := c.Lookup(name); !ok {
			t.Errorf("typing for %s, which is not a pod annotation of Istio's", name)
		}
	}
	if a, _ := c.Lookup(annotation.SidecarInject.Name); !a.Deprecated {
		t.Error("sidecar.istio.io/inject is deprecated in Istio's catalog (in favour of the label)")
	}
}

// TestValidateValue: a value is refused only where Istio's own validator refuses it, with the
// message Istio's injector gives, or beyond the server's bounds; a value Istio takes leniently
// (not of the annotation's kind) is not refused.
func TestValidateValue(t *testing.T) {
	c := DefaultCatalog()
	cases := []struct {
		key, good, bad, msg string
	}{
		{"sidecar.istio.io/proxyCPU", "250m", "fast", "invalid value 'fast' for annotation 'sidecar.istio.io/proxyCPU': quantities must match"},
		{"sidecar.istio.io/proxyMemoryLimit", "1Gi", "1 GB", "invalid value '1 GB' for annotation"},
		{"prometheus.istio.io/merge-metrics", "False", "nope", `invalid value 'nope' for annotation 'prometheus.istio.io/merge-metrics': strconv.ParseBool: parsing "nope": invalid syntax`},
		{"status.sidecar.istio.io/port", "15021", "-1", "invalid value '-1' for annotation"},
		{"sidecar.istio.io/interceptionMode", "TPROXY", "MAGIC", "interceptionMode invalid"},
		{"traffic.sidecar.istio.io/excludeOutboundPorts", "0", "3306,,x", "excludeOutboundPorts invalid"},
		{"traffic.sidecar.istio.io/includeOutboundIPRanges", "10.0.0.0/8,172.16.0.0/12", "10.0.0.0", "includeIPRanges invalid: failed parsing cidr '10.0.0.0'"},
		{"traffic.sidecar.istio.io/excludeOutboundIPRanges", "169.254.169.254/32", "*", "invalid value '*' for annotation"},
		// Istio's injector reads the proxy config before it validates the annotations: a value that
		// does not parse fails with the reader's message (TestLenientMatchesIstioctl), one that
		// parses with the validator's.
		{"proxy.istio.io/config", "holdApplicationUntilProxyStarts: true", "concurrency: [", "could not parse proxy config: yaml: line 1:"},
		{"proxy.istio.io/config", "concurrency: 2", "- a list", "could not parse proxy config: json: cannot unmarshal array"},
		{"proxy.istio.io/config", "discoveryAddress: istiod.istio-system.svc:15012", "discoveryAddress: nohostport", "invalid value 'discoveryAddress: nohostport' for annotation 'proxy.istio.io/config': 1 error occurred"},
		// The server's bounds: not Istio's, documented as limits.
		{"sidecar.istio.io/proxyCPU", "1", strings.Repeat("9", 65), "at most 64"},
		{"example.com/blob", "x", strings.Repeat("x", 300<<10), "at most 262144"},
	}
	for _, tc := range cases {
		t.Run(tc.key+"="+tc.bad[:min(len(tc.bad), 20)], func(t *testing.T) {
			if err := c.ValidateValue(tc.key, tc.good); err != nil {
				t.Fatalf("%q rejected: %v", tc.good, err)
			}
			err := c.ValidateValue(tc.key, tc.bad)
			if err == nil {
				t.Fatalf("%q accepted", tc.bad)
			}
			var ie *input.Error
			if !errors.As(err, &ie) {
				t.Fatalf("got %T %v, want *input.Error", err, err)
			}
			if !strings.Contains(ie.Text(), tc.msg) || !strings.Contains(ie.Field, tc.key) {
				t.Fatalf("got %v, want a message containing %q naming the key", ie, tc.msg)
			}
			if len(ie.Text()) > 3*yamldoc.MaxEcho {
				t.Fatalf("the message echoes %d bytes", len(ie.Text()))
			}
		})
	}
	// Values Istio accepts though they are not of the annotation's kind run: the lenient-*
	// checks say what Istio made of them.
	for _, kv := range [][2]string{
		{"sidecar.istio.io/inject", "no"}, {"sidecar.istio.io/inject", "False"}, {"sidecar.istio.io/nativeSidecar", "TRUE"},
		{"sidecar.istio.io/rewriteAppHTTPProbers", "False"}, {"prometheus.istio.io/merge-metrics", "False"},
		{"traffic.sidecar.istio.io/excludeOutboundPorts", "0"}, {"traffic.sidecar.istio.io/includeOutboundPorts", "eighty"},
		{"sidecar.istio.io/statsHistogramBins", "fifty"}, {"sidecar.istio.io/logLevel", "loud"}, {"sidecar.istio.io/userVolume", `{"v":`},
		{"example.com/anything", "whatever"},
	} {
		a, _ := c.Lookup(kv[0])
		if err := c.ValidateValue(kv[0], kv[1]); err != nil {
			t.Errorf("%s=%s refused: %v", kv[0], kv[1], err)
		}
		if a.Name != "" && FitsKind(a, kv[1]) {
			t.Errorf("%s=%s fits its kind %s: not a lenient case", kv[0], kv[1], a.Kind)
		}
	}
	// Kubernetes checks keys lower-cased; a key it refuses is refused.
	if err := c.ValidateStep(input.Step{Key: "Example.COM/Flag", Value: "1"}); err != nil {
		t.Errorf("a key with capitals refused: %v", err)
	}
	if err := c.ValidateStep(input.Step{Key: "not a key!", Value: "1"}); err == nil || !strings.Contains(err.Error(), "not a valid annotation key") {
		t.Errorf("a key Kubernetes refuses: %v", err)
	}
}

// TestFitsKind: the kind rules the lenient-* checks read, each on a value that fits and one that
// does not.
func TestFitsKind(t *testing.T) {
	c := DefaultCatalog()
	cases := []struct{ key, fits, not string }{
		{"sidecar.istio.io/nativeSidecar", "true", "TRUE"},
		{"sidecar.istio.io/statsHistogramBins", "50", "fifty"},
		{"sidecar.istio.io/logLevel", "debug", "loud"},
		{"traffic.sidecar.istio.io/includeOutboundPorts", "*", "0"},
		{"readiness.status.sidecar.istio.io/applicationPorts", "8080, 9090", "eighty"},
		{"sidecar.istio.io/userVolume", `{"v":{"emptyDir":{}}}`, `{"v":`},
		{"proxy.istio.io/config", "concurrency: 2", "- a list"},
	}
	for _, tc := range cases {
		a, ok := c.Lookup(tc.key)
		if !ok {
			t.Fatalf("%s is not in the catalog", tc.key)
		}
		if !FitsKind(a, tc.fits) || FitsKind(a, tc.not) {
			t.Errorf("%s (%s): %q fits %v, %q fits %v", tc.key, a.Kind, tc.fits, FitsKind(a, tc.fits), tc.not, FitsKind(a, tc.not))
		}
	}
}

// FuzzValidateValue runs every annotation's value check on arbitrary values: an *input.Error or
// nil, never a panic, and quickly (the bound on quantities keeps Istio's parser fast).
func FuzzValidateValue(f *testing.F) {
	c := DefaultCatalog()
	for i, a := range c.All() {
		f.Add(i, a.Example)
	}
	f.Add(0, "")
	f.Add(1, "\xff")
	f.Fuzz(func(t *testing.T, i int, value string) {
		all := c.All()
		if i < 0 {
			i = -i
		}
		a := all[i%len(all)]
		FitsKind(a, value) // the lenient checks' rule never panics either
		err := c.ValidateValue(a.Name, value)
		// Refused only where Istio refuses or a server bound applies, and then with an
		// *input.Error whose echo is bounded; never refused for not fitting the kind.
		bound, istio := SizeError(a.Name, value), error(nil)
		if v, ok := inject.AnnotationValidation[a.Name]; ok && bound == nil {
			istio = v(value)
		}
		switch refuse := bound != nil || istio != nil; {
		case err == nil && refuse:
			t.Fatalf("%s=%q accepted; Istio: %v, bound: %v", a.Name, value, istio, bound)
		case err != nil && !refuse:
			t.Fatalf("%s=%q refused though Istio accepts it: %v", a.Name, value, err)
		case err != nil:
			ie, ok := err.(*input.Error)
			if !ok {
				t.Fatalf("%s: %T %v", a.Name, err, err)
			}
			if len(ie.Text()) > 3*yamldoc.MaxEcho {
				t.Fatalf("%s: the message echoes %d bytes", a.Name, len(ie.Text()))
			}
		}
	})
}
