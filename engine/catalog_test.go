package engine

import (
	"strings"
	"testing"

	"istio.io/api/annotation"
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

func TestValidateValue(t *testing.T) {
	c := DefaultCatalog()
	cases := []struct {
		key, good, bad, msg string
	}{
		{"sidecar.istio.io/proxyCPU", "250m", "fast", "invalid value"},
		{"sidecar.istio.io/proxyMemoryLimit", "1Gi", "1 GB", "invalid value"},
		{"sidecar.istio.io/nativeSidecar", "true", "yes", "not a boolean"},
		{"prometheus.istio.io/merge-metrics", "false", "nope", "invalid value"},
		{"status.sidecar.istio.io/port", "15021", "-1", "invalid value"},
		{"sidecar.istio.io/statsHistogramBins", "50", "fifty", "not a whole number"},
		{"sidecar.istio.io/logLevel", "debug", "loud", "not one of"},
		{"sidecar.istio.io/interceptionMode", "TPROXY", "MAGIC", "interceptionMode invalid"},
		{"traffic.sidecar.istio.io/excludeOutboundPorts", "3306,6379", "3306,,x", "invalid value"},
		{"traffic.sidecar.istio.io/includeOutboundPorts", "*", "0", "not a port"},
		{"readiness.status.sidecar.istio.io/applicationPorts", "8080,9090", "eighty", "not a port"},
		{"traffic.sidecar.istio.io/includeOutboundIPRanges", "10.0.0.0/8,172.16.0.0/12", "10.0.0.0", "invalid value"},
		{"traffic.sidecar.istio.io/excludeOutboundIPRanges", "169.254.169.254/32", "*", "invalid value"},
		{"sidecar.istio.io/userVolume", `{"v":{"emptyDir":{}}}`, `{"v":`, "not valid JSON"},
		{"proxy.istio.io/config", "holdApplicationUntilProxyStarts: true", "concurrency: [", "invalid value"},
		{"proxy.istio.io/config", "concurrency: 2", "- a list", "invalid value"},
	}
	for _, tc := range cases {
		t.Run(tc.key+"="+tc.bad, func(t *testing.T) {
			if err := c.ValidateValue(tc.key, tc.good); err != nil {
				t.Fatalf("%q rejected: %v", tc.good, err)
			}
			err := c.ValidateValue(tc.key, tc.bad)
			if err == nil {
				t.Fatalf("%q accepted", tc.bad)
			}
			ie := asInputError(t, err)
			if !strings.Contains(ie.Msg, tc.msg) || !strings.Contains(ie.Field, tc.key) {
				t.Fatalf("got %v, want a message containing %q naming the key", ie, tc.msg)
			}
		})
	}
	// Keys outside the catalog take any value (pitfall checks judge them, not validation).
	if err := c.ValidateValue("example.com/anything", "whatever"); err != nil {
		t.Fatal(err)
	}
}

// FuzzValidateValue runs every annotation's value check on arbitrary values: an *InputError or
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
		if err := c.ValidateValue(a.Name, value); err != nil {
			if _, ok := err.(*InputError); !ok {
				t.Fatalf("%s: %T %v", a.Name, err, err)
			}
		}
	})
}
