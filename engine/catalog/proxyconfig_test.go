package catalog

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sidecarlab/sidecarlab/engine/internal/protodoc"
)

// TestProxyConfigDocsCurrent regenerates proxyconfig_docs.go from proxy.proto of the pinned
// istio.io/api and compares: an upgrade of istio.io/api without `go generate ./engine/catalog` fails here.
func TestProxyConfigDocsCurrent(t *testing.T) {
	src, source, err := protodoc.ProxyProto()
	if err != nil {
		t.Fatal(err)
	}
	want, err := protodoc.Generate(src, source, "ProxyConfig", "catalog", "proxyConfigDocs")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("proxyconfig_docs.go")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Fatalf("proxyconfig_docs.go is stale; run go generate ./engine/catalog (-want +got):\n%s", d)
	}
}

func TestProxyConfigFields(t *testing.T) {
	cases := []struct {
		name string
		kind ValueKind
		typ  string
	}{
		{"holdApplicationUntilProxyStarts", KindBool, "google.protobuf.BoolValue"},
		{"terminationDrainDuration", KindDuration, "google.protobuf.Duration"},
		{"concurrency", KindInteger, "google.protobuf.Int32Value"},
		{"interceptionMode", KindEnum, "istio.mesh.v1alpha1.ProxyConfig.InboundInterceptionMode"},
		{"proxyMetadata", KindYAML, "map<string, string>"},
		{"discoveryAddress", KindString, "string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, ok := LookupProxyConfigField(c.name)
			if !ok {
				t.Fatal("not offered")
			}
			if f.Kind != c.kind || f.Type != c.typ {
				t.Fatalf("kind %s type %s, want %s %s", f.Kind, f.Type, c.kind, c.typ)
			}
			if f.Doc == "" {
				t.Fatal("no doc")
			}
		})
	}
	if _, ok := LookupProxyConfigField("zipkinAddress"); ok {
		t.Error("a deprecated field is offered")
	}
	if f, _ := LookupProxyConfigField("interceptionMode"); !cmp.Equal(f.Enum, []string{"REDIRECT", "TPROXY", "NONE"}) {
		t.Errorf("interceptionMode enum %v", f.Enum)
	}
}

func TestSetProxyConfigField(t *testing.T) {
	cases := []struct {
		current, field, value, want string
		err                         bool
	}{
		{"", "concurrency", "2", "concurrency: 2", false},
		{"concurrency: 2", "holdApplicationUntilProxyStarts", "true", "concurrency: 2\nholdApplicationUntilProxyStarts: true", false},
		{"hold_application_until_proxy_starts: false", "holdApplicationUntilProxyStarts", "true", "holdApplicationUntilProxyStarts: true", false},
		{"concurrency: 2", "concurrency", "4", "concurrency: 4", false},
		{"", "terminationDrainDuration", "30s", "terminationDrainDuration: 30s", false},
		{"", "proxyMetadata", "A: b", "proxyMetadata:\n  A: b", false},
		{"", "terminationDrainDuration", "thirty", "", true},
		{"", "concurrency", "two", "", true},
		{"", "holdApplicationUntilProxyStarts", "yes", "", true},
		{"", "interceptionMode", "SIDEWAYS", "", true},
		{"", "noSuchField", "1", "", true},
		{"- a list", "concurrency", "2", "", true},
	}
	for _, c := range cases {
		t.Run(c.field+"="+c.value, func(t *testing.T) {
			got, err := SetProxyConfigField(c.current, c.field, c.value)
			if (err != nil) != c.err {
				t.Fatalf("err %v, want error %v", err, c.err)
			}
			if got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestDroppedProxyConfigFields(t *testing.T) {
	cases := []struct {
		old, new string
		want     []string
	}{
		{"concurrency: 2", "holdApplicationUntilProxyStarts: true", []string{"concurrency"}},
		{"concurrency: 2\nholdApplicationUntilProxyStarts: true", "concurrency: 3\nholdApplicationUntilProxyStarts: true", nil},
		{"hold_application_until_proxy_starts: true", "holdApplicationUntilProxyStarts: false", nil},
		{"", "concurrency: 2", nil},
		{"concurrency: 2\ntypoField: 1", "", []string{"concurrency", "typoField"}},
	}
	for _, c := range cases {
		if d := cmp.Diff(c.want, DroppedProxyConfigFields(c.old, c.new)); d != "" {
			t.Errorf("%q → %q (-want +got):\n%s", c.old, c.new, d)
		}
	}
}
