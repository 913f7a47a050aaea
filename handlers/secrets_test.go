package handlers

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/secrets"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
)

// TestScanAndRedactOwnMesh: a shared mesh's texts are scanned for secrets like the rest of the
// state (a proxyMetadata secret in the mesh config, a known-format key in the values), named by
// part and line, and redacted; a mesh without any has no finding and is kept byte for byte.
func TestScanAndRedactOwnMesh(t *testing.T) {
	const awsKey = "AKIAZ52HGXYRN4WBTEST"
	clean := engine.OwnMesh{InjectorConfig: "policy: enabled\n", Values: `{"global":{"meshID":"mesh1"}}`, MeshConfig: "defaultConfig:\n  holdApplicationUntilProxyStarts: true\n"}
	if got := scanSettings(engine.Settings{Install: engine.InstallOptions{Mesh: clean}}); len(got) != 0 {
		t.Fatalf("a clean mesh: %+v", got)
	}
	dirty := clean
	dirty.Values = `{"global":{"meshID":"` + awsKey + `"}}`
	dirty.MeshConfig = "defaultConfig:\n  proxyMetadata:\n    DB_PASSWORD: hunter2\n"
	s := engine.Settings{Install: engine.InstallOptions{Mesh: dirty}}
	var where []string
	for _, f := range scanSettings(s) {
		if strings.Contains(f.Excerpt+f.Path, "hunter2") || strings.Contains(f.Excerpt+f.Path, awsKey) {
			t.Errorf("a finding shows the secret: %+v", f)
		}
		where = append(where, fmt.Sprintf("%s:%d:%s", f.Setting, f.Line, strings.SplitN(f.Path, ":", 2)[0]))
	}
	if want := []string{"install.mesh:1:values", "install.mesh:3:meshConfig"}; !slices.Equal(where, want) {
		t.Fatalf("findings %v, want %v", where, want)
	}
	red, err := redactSettings(s)
	if err != nil {
		t.Fatal(err)
	}
	m := red.Install.Mesh
	if strings.Contains(m.Values+m.MeshConfig, "hunter2") || strings.Contains(m.Values, awsKey) || m.InjectorConfig != clean.InjectorConfig {
		t.Fatalf("redacted: %+v", m)
	}
	if got := scanSettings(red); len(got) != 0 {
		t.Fatalf("after redaction: %+v", got)
	}
}

// TestSecretsSeam: what package secrets gives back is put back in its place — ordinary settings
// and steps come back exactly as they were — and a document it cannot redact is an
// input.Error of the manifest, as the engine's own are.
func TestSecretsSeam(t *testing.T) {
	s := engine.Settings{Mode: engine.ModeNative, KubernetesVersion: "1.34",
		Install: engine.InstallOptions{Set: []string{"values.global.proxy.holdApplicationUntilProxyStarts=true"}, Overlay: "spec: {}\n",
			Mesh: engine.OwnMesh{MeshConfig: "defaultConfig: {}\n", Istio: "1.31.0"}, Revision: "canary"},
		Namespace: engine.Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled"}}}
	if r, err := redactSettings(s); err != nil || !reflect.DeepEqual(r, s) {
		t.Errorf("ordinary settings redacted: %+v %v", r, err)
	}
	steps := []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}, {Key: "example.com/gone", Remove: true}}
	if got := redactSteps(steps); !slices.Equal(got, steps) {
		t.Errorf("ordinary steps redacted: %+v", got)
	}
	if redactSteps(nil) != nil {
		t.Error("no steps became some")
	}
	err := redactError(&secrets.Error{Doc: 2, Line: 7, ID: "redact-differs"})
	if ie, ok := err.(*input.Error); !ok || ie.Doc != 2 || ie.Line != 7 || ie.Field != "manifest" || ie.ID != "redact-differs" || ie.Text() == "" {
		t.Errorf("redactError: %#v", err)
	}
}

// shareVariants are a few of package secrets' variants (internal/testkit/secretvariants.yaml) as a state
// holds them: a fused env name, a password in a file a ConfigMap holds, mysql's -pSecret, a
// proxy.istio.io/config step's proxyMetadata, an install option, a mesh config's
// OpenTelemetry header and a namespace label; each secret is made up and distinct.
var shareVariants = struct {
	manifest string
	steps    []input.Step
	settings engine.Settings
	secrets  []string
}{
	manifest: `apiVersion: v1
kind: Pod
metadata:
  name: migrate
spec:
  containers:
  - name: psql
    image: postgres:16
    env:
    - name: PGPASSWORD
      value: pg-Hunter2x
    - name: PGPASSFILE
      value: /run/secrets/pgpass
  - name: dump
    image: mysql:8
    command: ["mysqldump", "-h", "mysql", "-uroot", "-pMyS3cret", "shop"]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: orders
data:
  password_policy: strict
  application.properties: |
    spring.datasource.username=orders
    spring.datasource.password=spring-db-pw
`,
	steps: []input.Step{
		{Key: "sidecar.istio.io/proxyCPU", Value: "100m"},
		{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true\nproxyMetadata:\n  PGPASSWORD: stepPg2\n"},
	},
	settings: engine.Settings{
		Install: engine.InstallOptions{
			Set:  []string{"values.pilot.env.PILOT_TRACE_SAMPLING=100", "meshConfig.defaultConfig.proxyMetadata.PGPASSWORD=setPgPw"},
			Mesh: engine.OwnMesh{MeshConfig: "extensionProviders:\n- name: otel\n  opentelemetry:\n    service: collector.observability.svc.cluster.local\n    port: 4318\n    http:\n      headers:\n        Authorization: Bearer otelBearer9\n        x-tenant: acme\n"},
		},
		Namespace: engine.Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled", "password-rotation": "weekly", "db-password": "nslabelpw"}},
	},
	secrets: []string{"pg-Hunter2x", "MyS3cret", "spring-db-pw", "stepPg2", "setPgPw", "otelBearer9", "nslabelpw"},
}

// TestShareVariants: the share API and the form's Share hold up a state with secrets written
// the ways people write them (shareVariants), list them without their values, and store them
// redacted on request — with the near misses beside them (PGPASSFILE, password_policy, a
// label password-rotation) left as they were.
func TestShareVariants(t *testing.T) {
	v := shareVariants
	links := &countingLinks{memLinks: newMemLinks()}
	h := serverConfig(t, Config{Links: links})
	req := api.ShareRequest{InjectRequest: api.InjectRequest{Manifest: v.manifest, Steps: v.steps, Settings: v.settings}}
	r := postShareAPI(t, h, req, nil)
	var sec api.SecretsResponse
	if r.status != http.StatusUnprocessableEntity || json.Unmarshal([]byte(r.body), &sec) != nil || links.puts.Load() != 0 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var where []string
	for _, f := range sec.Secrets {
		where = append(where, fmt.Sprintf("%s|%d|%d|%s|%s", f.Setting, f.Doc, f.Step, f.Path, f.Kind))
	}
	want := []string{
		"|1|0|spec.containers[psql].env[PGPASSWORD].value|env-name",
		"|1|0|spec.containers[dump].command[4]|flag-value",
		`|2|0|data["application.properties"]|env-name`,
		"|0|2|proxyMetadata.PGPASSWORD|env-name",
		"install.set|0|0|meshConfig.defaultConfig.proxyMetadata.PGPASSWORD|env-name",
		"install.mesh|0|0|meshConfig: extensionProviders[otel].opentelemetry.http.headers.Authorization|env-name",
		"namespace.labels|0|0|db-password|env-name",
	}
	if !slices.Equal(where, want) || sec.Total != len(want) {
		t.Errorf("findings (%d)\n%s\nwant\n%s", sec.Total, strings.Join(where, "\n"), strings.Join(want, "\n"))
	}
	for _, s := range v.secrets {
		if strings.Contains(r.body, s) {
			t.Errorf("the 422 echoes %s", s)
		}
	}

	st, js := shareRedacted(t, h, req)
	for _, s := range v.secrets {
		if strings.Contains(js, s) {
			t.Errorf("stored with %s: %s", s, js)
		}
	}
	// Only the secrets' bytes went: the near misses and the files around the secrets stayed.
	wantManifest := v.manifest
	for _, s := range []string{"pg-Hunter2x", "MyS3cret", "spring-db-pw"} {
		wantManifest = strings.ReplaceAll(wantManifest, s, secrets.Redacted)
	}
	if st.Manifest != wantManifest {
		t.Errorf("stored manifest:\n%s\nwant\n%s", st.Manifest, wantManifest)
	}
	if got := st.Steps[1].Value; got != strings.ReplaceAll(v.steps[1].Value, "stepPg2", secrets.Redacted) || st.Steps[0] != v.steps[0] {
		t.Errorf("stored steps: %+v", st.Steps)
	}
	if l := st.Settings.Namespace.Labels; l["password-rotation"] != "weekly" || l["db-password"] != "redacted" || l["istio-injection"] != "enabled" {
		t.Errorf("stored labels: %v", l)
	}
	if s := st.Settings.Install.Set; s[0] != v.settings.Install.Set[0] || !strings.HasSuffix(s[1], "PGPASSWORD="+secrets.Redacted) {
		t.Errorf("stored --set: %q", s)
	}
	if m := st.Settings.Install.Mesh.MeshConfig; m != strings.ReplaceAll(v.settings.Install.Mesh.MeshConfig, "otelBearer9", secrets.Redacted) {
		t.Errorf("stored mesh config:\n%s", m)
	}

	// The form's Share: the same findings for what the form carries (manifest, steps, --set).
	stepsJSON, _ := json.Marshal(v.steps)
	form := url.Values{"manifest": {v.manifest}, "steps": {string(stepsJSON)}, "set": {strings.Join(v.settings.Install.Set, "\n")}}
	page := do(t, h, shareRequest(form))
	if page.status != http.StatusOK || testid(page, "share-secret").Length() != 5 {
		t.Fatalf("form: %d, %d rows: %s", page.status, testid(page, "share-secret").Length(), testid(page, "share-secrets-list").Text())
	}
	for _, s := range v.secrets {
		if strings.Contains(page.body, ">"+s) || strings.Contains(testid(page, "share-secrets-list").Text(), s) {
			t.Errorf("the form's list shows %s", s)
		}
	}
	form.Set("secrets", "redact")
	r = do(t, h, shareRequest(form))
	loc := r.header.Get("Location")
	if r.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/s/") {
		t.Fatalf("form redact: %d %q", r.status, loc)
	}
	if st := storedState(t, h, strings.TrimPrefix(loc, "/s/")); st.Manifest != wantManifest || strings.Contains(st.Steps[1].Value, "stepPg2") {
		t.Errorf("form stored:\n%s\n%+v", st.Manifest, st.Steps)
	}

	// The near misses alone are shared at once.
	clean := api.ShareRequest{InjectRequest: api.InjectRequest{
		Manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: orders\ndata:\n  password_policy: strict\n  DB_PASSWORD_FILE: /run/secrets/db\n  PGPASSWORD: $(DB_PASS)\n  passwordMinLength: \"8\"\n",
		Steps:    []input.Step{{Key: "example.com/password-policy", Value: "strict"}},
		Settings: engine.Settings{Namespace: engine.Namespace{Name: "shop", Labels: map[string]string{"password-rotation": "weekly"}}},
	}}
	if r := postShareAPI(t, h, clean, nil); r.status != http.StatusCreated {
		t.Errorf("near misses: %d %s", r.status, r.body)
	}
}

// variantState is the state that holds a corpus variant's place where a share stores it: the
// manifest (a Deployment when the place has none), a step, the install's --set lines and
// overlay, the mesh's own texts, the namespace's labels.
func variantState(p testkit.SecretPlace) api.State {
	st := api.State{Manifest: cmp.Or(p.Manifest, testkit.Deployment)}
	if p.Step != nil {
		st.Steps = []input.Step{{Key: p.Step.Key, Value: p.Step.Value}}
	}
	st.Settings.Install.Set, st.Settings.Install.Overlay, st.Settings.Namespace.Labels = p.Set, p.Overlay, p.Labels
	m := &st.Settings.Install.Mesh
	m.InjectorConfig, m.Values, m.MeshConfig = p.Mesh["injectorConfig"], p.Mesh["values"], p.Mesh["meshConfig"]
	return st
}

// TestShareGateVariants: every variant of the secret corpus, wherever it is written, stops a
// share at the gate every storing path passes (the share API, the page's Share, its form
// without JavaScript: secretsGate), is not echoed by the findings, and is gone from the state a
// redacted share stores; every near miss passes the gate and is stored as it was.
func TestShareGateVariants(t *testing.T) {
	vs, err := testkit.SecretVariants()
	if err != nil || len(vs) < 60 {
		t.Fatalf("%d variants: %v", len(vs), err)
	}
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			st := variantState(v.Found)
			_, findings, total, err := secretsGate(st, secretsAsk)
			if err != nil || total == 0 {
				t.Fatalf("not stopped at the gate (%v)", err)
			}
			for _, f := range findings {
				if strings.Contains(f.Excerpt, v.Secret) {
					t.Errorf("a finding echoes the secret: %+v", f)
				}
			}
			red, _, _, err := secretsGate(st, secretsRedact)
			if js, _ := json.Marshal(red); err != nil || strings.Contains(string(js), v.Secret) {
				t.Errorf("stored redacted with the secret (%v): %s", err, js)
			}
			near := variantState(v.Near)
			if _, findings, total, err := secretsGate(near, secretsAsk); err != nil || total != 0 {
				t.Errorf("the near miss is stopped (%v): %+v", err, findings)
			}
			kept, _, _, err := secretsGate(near, secretsRedact)
			if a, b := string(permalink.JSON(kept)), string(permalink.JSON(near)); err != nil || a != b {
				t.Errorf("the near miss is stored changed (%v):\n%s\nwant\n%s", err, a, b)
			}
		})
	}
}
