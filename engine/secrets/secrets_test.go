package secrets

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

// Made-up values that look like what they stand for; none of them was ever a credential.
const (
	fakeToken  = "Zq8vR2mXk4TbW9yLp3NcA7hJ"                                         // 24 characters of base64
	fakeHex    = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" // sha256("test")
	fakePEM    = "-----BEGIN RSA PRIVATE KEY-----\n    MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n    -----END RSA PRIVATE KEY-----"
	fakeDocker = `{"auths":{"registry.example.com":{"auth":"dXNlcjpwYXNz"}}}`
)

func TestScanSecrets(t *testing.T) {
	pemB64 := base64.StdEncoding.EncodeToString([]byte("-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n"))
	tests := []struct {
		name     string
		manifest string
		want     []Finding
	}{
		{
			name: "env values by name",
			manifest: `apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: app
    image: app:1
    env:
    - name: DB_PASSWORD
      value: hunter2
    - name: apiToken
      value: "abc"
    - name: SECRET_NAME
      value: db-creds
    - name: TLS_KEY
      value: /etc/tls/tls.key
    - name: LOG_LEVEL
      value: debug
    - name: PASSWORD_EMPTY
      value: ""
    - name: KEYCLOAK_REALM
      value: master
`,
			want: []Finding{
				{Doc: 1, Line: 11, Path: "spec.containers[app].env[DB_PASSWORD].value", Kind: EnvName, Excerpt: "DB_PASSWORD: <redacted>"},
				{Doc: 1, Line: 13, Path: "spec.containers[app].env[apiToken].value", Kind: EnvName, Excerpt: "apiToken: <redacted>"},
			},
		},
		{
			name: "Secret documents, in a List too",
			manifest: `apiVersion: v1
kind: Service
metadata:
  name: s
---
apiVersion: v1
kind: Secret
metadata:
  name: db
data:
  password: aHVudGVyMg==
  key.pem: ` + pemB64 + `
stringData:
  user: admin
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Secret
  metadata:
    name: pull
  type: kubernetes.io/dockerconfigjson
  data:
    .dockerconfigjson: e30=
`,
			want: []Finding{
				{Doc: 2, Line: 7, Path: "kind", Kind: Document, Excerpt: "kind: Secret"},
				{Doc: 2, Line: 11, Path: "data.password", Kind: DataValue, Excerpt: "password: <redacted>"},
				{Doc: 2, Line: 12, Path: `data["key.pem"]`, Kind: PrivateKey, Excerpt: "key.pem: <redacted>"},
				{Doc: 2, Line: 14, Path: "stringData.user", Kind: DataValue, Excerpt: "user: <redacted>"},
				{Doc: 3, Line: 20, Path: "items[0].kind", Kind: Document, Excerpt: "kind: Secret"},
				{Doc: 3, Line: 25, Path: `items[0].data[".dockerconfigjson"]`, Kind: RegistryCredential, Excerpt: ".dockerconfigjson: <redacted>"},
			},
		},
		{
			name: "values anywhere: keys, credentials, random tokens; digests and checksums allowed",
			manifest: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
  annotations:
    example.com/api: ` + fakeToken + `
spec:
  template:
    metadata:
      annotations:
        checksum/config: ` + fakeHex + `
        build.example.com/sum: ` + fakeHex + `
        owner: my-app-7d9f8b6c5d-x2kqz
    spec:
      containers:
      - name: app
        image: docker.io/library/nginx@sha256:` + fakeHex + `
        args: ["--config=/etc/app/config.yaml", "--name=ReviewsServiceV2Instance"]
        command:
        - sh
        - -c
        - |
          ` + strings.ReplaceAll(fakePEM, "\n", "\n      ") + `
      - name: sidecar
        image: registry.example.com/sidecar:v1.2.3
        env:
        - name: DOCKER_CONFIG_JSON
          value: '` + fakeDocker + `'
`,
			want: []Finding{
				{Doc: 1, Line: 6, Path: `metadata.annotations["example.com/api"]`, Kind: HighEntropy, Excerpt: "example.com/api: <redacted>"},
				{Doc: 1, Line: 12, Path: `spec.template.metadata.annotations["build.example.com/sum"]`, Kind: HighEntropy, Excerpt: "build.example.com/sum: <redacted>"},
				{Doc: 1, Line: 22, Path: "spec.template.spec.containers[app].command[2]", Kind: PrivateKey, Excerpt: "- <redacted>"},
				{Doc: 1, Line: 30, Path: "spec.template.spec.containers[sidecar].env[DOCKER_CONFIG_JSON].value", Kind: RegistryCredential, Excerpt: "value: <redacted>"},
			},
		},
		{
			name: "a document that does not parse is scanned line by line",
			manifest: `apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations:
    token: ` + fakeToken + `
  bad: [unclosed
`,
			want: []Finding{
				{Doc: 1, Line: 6, Kind: HighEntropy, Excerpt: "token: <redacted>"},
			},
		},
		{
			// A random token before a private key on the same line is flagged too (the fuzzer's
			// find: once the key was redacted, the token was found).
			name:     "a token before a private key on a line that does not parse",
			manifest: "k: \"" + fakeToken + "-----BEGIN PRIVATE KEY-----\n",
			want: []Finding{
				{Doc: 1, Line: 1, Kind: HighEntropy, Excerpt: `k: "<redacted><redacted>`},
				{Doc: 1, Line: 1, Kind: PrivateKey, Excerpt: `k: "<redacted><redacted>`},
			},
		},
		{
			name: "nothing to find",
			manifest: `apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","kind":"ConfigMap"}'
data:
  password_policy: strict
  passwordMinLength: "8"
---
apiVersion: v1
kind: Secret
metadata:
  name: redacted-before
stringData:
  password: <redacted>
  empty: ""
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, total := Scan([]byte(tt.manifest))
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if total != len(got) {
				t.Errorf("total %d, want %d", total, len(got))
			}
			for _, f := range got {
				for _, secret := range []string{fakeToken, fakeHex, "hunter2", "BEGIN", "auths"} {
					if strings.Contains(f.Excerpt+f.Path, secret) {
						t.Errorf("finding %+v echoes %q", f, secret)
					}
				}
			}
		})
	}
}

func TestScanSecretsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Secret\nmetadata:\n  name: many\ndata:\n")
	for i := range MaxFindings + 50 {
		b.WriteString("  k" + strings.Repeat("x", 300) + strconv.Itoa(i) + ": c2VjcmV0\n")
	}
	got, total := Scan([]byte(b.String()))
	if len(got) != MaxFindings || total != MaxFindings+51 {
		t.Fatalf("got %d findings of %d, want %d of %d", len(got), total, MaxFindings, MaxFindings+51)
	}
	for _, f := range got {
		if len(f.Path) > yamldoc.MaxEcho+len("…") || len(f.Excerpt) > yamldoc.MaxEcho+len("…: <redacted>") {
			t.Fatalf("unbounded finding: path %d bytes, excerpt %d bytes", len(f.Path), len(f.Excerpt))
		}
	}
}

// TestHighEntropy holds the threshold's claims (see highEntropy): random tokens of the
// alphabets it covers are flagged, names and hashes meant to be seen are not.
func TestHighEntropy(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	const hex = "0123456789abcdef"
	for _, c := range []struct {
		alphabet string
		lengths  []int
	}{{b64, []int{20, 24, 32, 40, 64}}, {hex, []int{32, 40, 64}}} {
		for _, n := range c.lengths {
			flagged, tries := 0, 500
			for range tries {
				b := make([]byte, n)
				for i := range b {
					b[i] = c.alphabet[r.Intn(len(c.alphabet))]
				}
				if highEntropy(string(b)) {
					flagged++
				}
			}
			// Tokens without a digit, or of one case only, are not flagged by design (a few %).
			if flagged < tries*9/10 {
				t.Errorf("alphabet of %d, length %d: %d of %d random tokens flagged, want ≥ 90 %%", len(c.alphabet), n, flagged, tries)
			}
		}
	}
	for _, s := range []string{
		"prometheus-kube-state-metrics-controller", "my-app-7d9f8b6c5d-x2kqz", "ISTIO_META_APP_CONTAINERS",
		"docker.io/istio/proxyv2:1.31.0-distroless", "ReviewsServiceV2Instance", "/var/run/secrets/kubernetes.io/serviceaccount",
		"image@sha256:" + fakeHex, "00000000000000000000000000000000000000ab", "http://localhost:15020/app-health/reviews/readyz",
	} {
		if highEntropy(s) {
			t.Errorf("%q is flagged as random", s)
		}
	}
	for _, s := range []string{fakeToken, fakeHex, "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"} {
		if !highEntropy(s) {
			t.Errorf("%q is not flagged as random", s)
		}
	}
}

var redactInput = "apiVersion: v1\r\n" + `kind: Pod
metadata:
  name: p # the pod
  annotations:
    example.com/api: "` + fakeToken + `"   # quoted
    example.com/single: 'x-` + fakeToken + `'
spec:
  containers:
  - name: app
    image: app:1
    env:
    - {name: DB_PASSWORD, value: hunter2}
    - name: API_KEY
      value: >-
        s3cr3t
        folded
    - name: MODE
      value: "fast"
    args:
    - |
      ` + strings.ReplaceAll(fakePEM, "\n    ", "\n      ") + `
    - --verbose
---
apiVersion: v1
kind: Secret
metadata:
  name: db
stringData:
  password: "multi
    line"
  user: admin
`

const redactWant = "apiVersion: v1\r\n" + `kind: Pod
metadata:
  name: p # the pod
  annotations:
    example.com/api: "<redacted>"   # quoted
    example.com/single: '<redacted>'
spec:
  containers:
  - name: app
    image: app:1
    env:
    - {name: DB_PASSWORD, value: <redacted>}
    - name: API_KEY
      value: <redacted>
    - name: MODE
      value: "fast"
    args:
    - <redacted>
    - --verbose
---
apiVersion: v1
kind: Secret
metadata:
  name: db
stringData:
  password: "<redacted>"
  user: <redacted>
`

func TestRedact(t *testing.T) {
	got, err := Redact([]byte(redactInput))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(redactWant, got); diff != "" {
		t.Errorf("Redact (-want +got):\n%s", diff)
	}
	// Nothing is left to find, not even the Secret, whose values are all redacted.
	if left, _ := Scan([]byte(got)); len(left) > 0 {
		t.Errorf("left after Redact: %+v", left)
	}
	// Nothing to redact: the manifest comes back byte for byte.
	clean, err := os.ReadFile(filepath.Join("..", "testdata", "corpus", "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Redact(clean); err != nil || got != string(clean) {
		t.Errorf("Redact changed a manifest without secrets (err %v)", err)
	}
}

// TestRedactFallback: a plain scalar folded over lines cannot be cut out of the text exactly;
// the document is written again from its tree, and the secret is gone all the same.
func TestRedactFallback(t *testing.T) {
	in := `# a comment
apiVersion: v1
kind: Secret
metadata:
  name: s
stringData:
  pw: first
    second
---
kind: ConfigMap
data:
  k: v # kept
`
	got, err := Redact([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `# a comment
apiVersion: v1
kind: Secret
metadata:
  name: s
stringData:
  pw: <redacted>
---
kind: ConfigMap
data:
  k: v # kept
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Redact (-want +got):\n%s", diff)
	}
}

// FuzzRedact: on any input the scan and Redact return (never panic), Redact with the redacted
// manifest or an *Error; what it returns has nothing left for the scan to find, and
// redacting it again changes nothing.
func FuzzRedact(f *testing.F) {
	paths, _ := filepath.Glob("../testdata/corpus/*.yaml")
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte(redactInput))
	f.Add([]byte("kind: Secret\nstringData:\n  a: |2\n     x\n  b: &x y\n  c: *x\n  d: !!str z\n"))
	f.Add([]byte("env:\n- {name: TOKEN, value: 'a''b'}\n- name: KEY\n  value: \"q\\\"\n  r\"\n"))
	f.Add([]byte("# password: hunter2\na: b # token=Zq8vR2mXk4TbW9yLp3NcA7hJ\nc:\n  # postgres://u:hunter6@db/x\n  d: |\n    # password: not-a-comment\n"))
	f.Add([]byte("a: {b: &pw hunter2}\nenv:\n- {name: DB_PASSWORD, value: *pw}\n- <<: {name: API_TOKEN, value: hunter3}\nargs: [--password, hunter4, --token=hunter5, 'postgres://u:hunter6@db/x']\nc: hunter2\n"))
	f.Add([]byte("a:\n  " + awsKeyID + ": x # " + slackWebhook + "\nb: [\"key " + awsKeyID + "\", &u '" + slackWebhook + "']\nc: *u\n---\nd: " + awsKeyID + "x\n"))
	f.Add([]byte("a: [\n# " + awsKeyID + " " + slackWebhook + " Zq8vR2mXk4TbW9yLp3NcA7hJ\n"))
	// Issue 40: secrets inside values (files, command lines), comments redacted in place,
	// escapes, continued lines and tags.
	f.Add([]byte("kind: ConfigMap\ndata:\n  app.properties: |\n    a.password=x1y2z3\n    b=c # PGPASSWORD=q1w2e3\n  .pgpass: |\n    h:5432:d:u:pw123\n  c: 'mysql -uroot -pS3cret'\n  d: \"Password=p4ss;x=y\"\n  e: !plain hunter2\n  db_password: \"hun\\\n    ter2\"\n# admin pw: abc123 # pw: abc\nf: \"\\x41KIAZ52HGXYRN4WBTEST\"\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		Scan(in)
		out, err := Redact(in)
		if err != nil {
			// Only a document the YAML encoder cannot write again may fail, as an *Error.
			if re, ok := err.(*Error); !ok || re.Error() == "" || re.ID == "" {
				t.Fatalf("got %T %v, want an *Error with its sentence", err, err)
			}
			return
		}
		if left, _ := Scan([]byte(out)); len(left) > 0 {
			t.Fatalf("left after Redact: %+v\n%s", left, out)
		}
		if again, err := Redact([]byte(out)); err != nil || again != out {
			t.Fatalf("Redact is not idempotent (err %v)", err)
		}
	})
}

// TestRedactJSON: a JSON manifest (kubectl takes JSON too) stays JSON, escapes and all.
func TestRedactJSON(t *testing.T) {
	in := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"pw":"aHVudGVyMg=="}}
---
{
  "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
  "spec": {"containers": [{"name": "a", "image": "x", "env": [{"name": "API_TOKEN", "value": "s3cr3t\"q"}]}]}
}
`
	want := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"pw":"<redacted>"}}
---
{
  "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
  "spec": {"containers": [{"name": "a", "image": "x", "env": [{"name": "API_TOKEN", "value": "<redacted>"}]}]}
}
`
	got, err := Redact([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Redact (-want +got):\n%s", diff)
	}
}

func TestScanSteps(t *testing.T) {
	steps := []Step{
		{Key: "sidecar.istio.io/proxyCPU", Value: "200m"},
		{Key: "example.com/token", Value: fakeToken},
		{Key: "proxy.istio.io/config", Value: "proxyMetadata:\n  KEY: |\n    " + strings.ReplaceAll(fakePEM, "\n", "\n    ")},
		{Key: "example.com/token", Remove: true},
		{Key: "example.com/pull", Value: fakeDocker},
		{Key: "example.com/done", Value: Redacted},
		{Key: "checksum/config", Value: "sha256:" + fakeHex},
	}
	want := []Finding{
		{Step: 2, Kind: HighEntropy, Excerpt: "example.com/token: <redacted>"},
		{Step: 3, Kind: PrivateKey, Excerpt: "proxy.istio.io/config: <redacted>"},
		{Step: 5, Kind: RegistryCredential, Excerpt: "example.com/pull: <redacted>"},
	}
	if diff := cmp.Diff(want, ScanSteps(steps)); diff != "" {
		t.Errorf("ScanSteps (-want +got):\n%s", diff)
	}
	if got := ScanSteps(RedactSteps(steps)); len(got) != 0 {
		t.Errorf("left after RedactSteps: %+v", got)
	}
}

// TestSecretCorpus: issue 22's variants that reached a permanent link unflagged, each found and,
// for a manifest, redacted wherever the secret is (no "hunter2" left, the result still a
// manifest with nothing left to find); and near misses that are not secrets, not flagged.
// Credentials of known formats, made up: an AWS access key id (not AWS's documented example,
// which gitleaks allows) and a Slack webhook URL whose last part is slackToken.
const (
	awsKeyID     = "AKIAZ52HGXYRN4WBTEST"
	slackToken   = "abcdefghijklmnopqrstuvwx"
	slackWebhook = "https://hooks.slack.com/services/T0AAAAAAA/B0AAAAAAA/" + slackToken
)

func TestSecretCorpus(t *testing.T) {
	pod := func(spec string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: app\n    image: app\n" + spec
	}
	found := []struct {
		name     string
		manifest string
		steps    []Step
		kind     Kind
	}{
		{"an env value through an anchor and alias", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: {a: &pw hunter2}\nspec:\n  containers:\n  - name: app\n    image: app\n    env:\n    - name: DB_PASSWORD\n      value: *pw\n", nil, EnvName},
		{"an env entry built with a merge key", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: &base {name: DB_PASSWORD, value: hunter2}\nspec:\n  containers:\n  - name: app\n    image: app\n    env:\n    - <<: *base\n", nil, EnvName},
		{"credentials in a URL", pod("    env:\n    - name: DATABASE_URL\n      value: postgres://admin:hunter2@db:5432/x\n"), nil, URLCredential},
		{"--password=… in args", pod("    args: [\"--verbose\", \"--password=hunter2\"]\n"), nil, FlagValue},
		{"--password then its value in args", pod("    args: [\"--password\", \"hunter2\"]\n"), nil, FlagValue},
		{"kind: secret in lower case", "apiVersion: v1\nkind: secret\nmetadata:\n  name: s\nstringData:\n  password: hunter2\n", nil, DataValue},
		{"a ConfigMap's binaryData", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\nbinaryData:\n  keystore.jks: aHVudGVyMg==\n", nil, DataValue},
		{"DB_PASSWORD in a proxy.istio.io/config step's proxyMetadata", pod(""), []Step{{Key: "proxy.istio.io/config", Value: "proxyMetadata:\n  DB_PASSWORD: hunter2\n"}}, EnvName},
		{"a URL with credentials in a step", pod(""), []Step{{Key: "example.com/db", Value: "postgres://admin:hunter2@db:5432/x"}}, URLCredential},
		{"a secret in a YAML comment", "# admin password: hunter2\n" + pod("    env:\n    - name: A\n      value: b # DB_TOKEN=hunter2\n"), nil, Comment},
		{"a URL with credentials in a comment", pod("    # was postgres://admin:hunter2@db:5432/x\n    env: []\n"), nil, Comment},
		{"the same value in a ConfigMap", pod("    env:\n    - name: DB_PASSWORD\n      value: hunter2\n") + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  copy: hunter2\n", nil, SameValue},
		// Credentials of known formats, by gitleaks' rules.
		{"an AWS access key id in an annotation", strings.Replace(pod(""), "  name: p\n", "  name: p\n  annotations:\n    example.com/aws: "+awsKeyID+"\n", 1), nil, KnownFormat},
		{"an AWS access key id in a label", strings.Replace(pod(""), "  name: p\n", "  name: p\n  labels:\n    aws: "+awsKeyID+"\n", 1), nil, KnownFormat},
		{"an AWS access key id in args", pod("    args: [\"--region=eu-west-1\", \"--key-id " + awsKeyID + "\"]\n"), nil, KnownFormat},
		{"an AWS access key id as a map key", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  " + awsKeyID + ": owner\n", nil, KnownFormat},
		{"an AWS access key id in a step", pod(""), []Step{{Key: "example.com/aws", Value: awsKeyID}}, KnownFormat},
		{"a Slack webhook URL", pod("    env:\n    - name: ALERTS\n      value: " + slackWebhook + "\n"), nil, KnownFormat},
		{"a Slack webhook URL in a comment", pod("    env: [] # alerts go to " + slackWebhook + "\n"), nil, Comment},
		{"a Slack webhook URL in a document that does not parse", pod("    env: [\n    # " + slackWebhook + "\n"), nil, KnownFormat},
		{"an AWS access key id through an alias, in a ConfigMap too", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: {a: &k " + awsKeyID + "}\nspec:\n  containers:\n  - name: app\n    image: app\n    env:\n    - name: KEY\n      value: *k\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  note: \"the key is " + awsKeyID + "\"\n", nil, KnownFormat},
	}
	for _, c := range found {
		t.Run(c.name, func(t *testing.T) {
			var all []Finding
			fs, _ := Scan([]byte(c.manifest))
			all = append(all, fs...)
			all = append(all, ScanSteps(c.steps)...)
			if !slices.ContainsFunc(all, func(f Finding) bool { return f.Kind == c.kind }) {
				t.Fatalf("no %s finding: %+v", c.kind, all)
			}
			for _, f := range all {
				if strings.Contains(f.Excerpt+f.Path, "hunter2") || strings.Contains(f.Excerpt+f.Path, awsKeyID) || strings.Contains(f.Excerpt+f.Path, slackToken) {
					t.Errorf("a finding shows the secret: %+v", f)
				}
			}
			if c.steps != nil {
				for _, st := range RedactSteps(c.steps) {
					if strings.Contains(st.Value, "hunter2") || strings.Contains(st.Value, awsKeyID) {
						t.Errorf("redacted steps keep it: %q", st.Value)
					}
				}
				return
			}
			red, err := Redact([]byte(c.manifest))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(red, "hunter2") || strings.Contains(red, "aHVudGVyMg") || strings.Contains(red, awsKeyID) || strings.Contains(red, slackToken) {
				t.Errorf("redacted, the secret is still there:\n%s", red)
			}
			if fs, n := Scan([]byte(red)); n != 0 {
				t.Errorf("redacted, %d findings are left: %+v\n%s", n, fs, red)
			}
		})
	}
	clean := map[string]string{
		"a file path, a placeholder, a flag naming a file":              pod("    args: [\"--password-file=/etc/pw\", \"--token=${TOKEN}\", \"--config=/etc/app.yaml\", \"--password\", \"/run/secrets/pw\"]\n"),
		"a URL with a user and no password, and one with a placeholder": pod("    env:\n    - name: UPSTREAM\n      value: https://user@example.com/x\n    - name: DB\n      value: postgres://admin:${DB_PASSWORD}@db/x\n"),
		"a ConfigMap's data":                             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  level: debug\n",
		"comments that name secrets without holding one": "# the password is in the vault\n# token file: /etc/token\n# DB_PASSWORD: ${DB_PASSWORD}\n" + pod(""),
	}
	for name, m := range clean {
		if fs, n := Scan([]byte(m)); n != 0 {
			t.Errorf("%s: flagged %+v", name, fs)
		}
	}
	if fs := ScanSteps([]Step{{Key: "proxy.istio.io/config", Value: "proxyMetadata:\n  ISTIO_META_DNS_CAPTURE: \"true\"\n  TLS_KEY_FILE: /etc/key.pem\n"}}); len(fs) != 0 {
		t.Errorf("ordinary proxyMetadata flagged: %+v", fs)
	}
}

// TestScanSettings: the settings are scanned like a manifest — an install option's value (by
// its value, and by its path's last name), the overlay (a proxyMetadata map too), a namespace
// label's value and key — and RedactSettings takes out exactly what was found, keeping labels
// valid; ordinary settings are not flagged.
func TestScanSettings(t *testing.T) {
	s := Settings{
		Set: []string{
			"values.global.proxy.holdApplicationUntilProxyStarts=true",
			"meshConfig.defaultConfig.proxyMetadata.DB_PASSWORD=hunter2",
			"values.global.remotePilotAddress=postgres://admin:hunter2@db:5432/x",
			"values.global.meshID=" + awsKeyID,
			"meshConfig.defaultConfig.proxyMetadata.TLS_KEY_FILE=/etc/key.pem",
		},
		Overlay: "spec:\n  meshConfig:\n    defaultConfig:\n      proxyMetadata:\n        API_TOKEN: hunter3\n        ISTIO_META_DNS_CAPTURE: \"true\"\n  components:\n    ingressGateways:\n    - name: g\n      k8s:\n        env:\n        - {name: DB_PASSWORD, value: hunter4} # hook " + slackWebhook + "\n",
		Labels: map[string]string{
			"istio-injection": "enabled", "istio.io/rev": "canary", "pod-security.kubernetes.io/enforce": "baseline",
			"owner": awsKeyID, awsKeyID: "yes",
		},
	}
	got := ScanSettings(s)
	var where []string
	for _, f := range got {
		where = append(where, fmt.Sprintf("%s:%d:%s:%s", f.Setting, f.Line, f.Path, f.Kind))
		for _, secret := range []string{"hunter", awsKeyID, slackToken} {
			if strings.Contains(f.Excerpt+f.Path, secret) {
				t.Errorf("a finding shows the secret: %+v", f)
			}
		}
	}
	want := []string{
		"install.set:2:meshConfig.defaultConfig.proxyMetadata.DB_PASSWORD:env-name",
		"install.set:3:values.global.remotePilotAddress:url-credential",
		"install.set:4:values.global.meshID:known-format",
		"install.overlay:5:spec.meshConfig.defaultConfig.proxyMetadata.API_TOKEN:env-name",
		"install.overlay:12:spec.components.ingressGateways[g].k8s.env[DB_PASSWORD].value:env-name",
		"install.overlay:12::comment",
		"namespace.labels:0::known-format",
		"namespace.labels:0:owner:known-format",
	}
	if !slices.Equal(where, want) {
		t.Errorf("found\n%s\nwant\n%s", strings.Join(where, "\n"), strings.Join(want, "\n"))
	}
	red, err := RedactSettings(s)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(red)
	for _, secret := range []string{"hunter", awsKeyID, slackToken} {
		if strings.Contains(string(js), secret) {
			t.Errorf("redacted, %s is left: %s", secret, js)
		}
	}
	if left := ScanSettings(red); len(left) != 0 {
		t.Errorf("redacted, findings are left: %+v", left)
	}
	if red.Set[0] != s.Set[0] || red.Set[4] != s.Set[4] || red.Set[1] != "meshConfig.defaultConfig.proxyMetadata.DB_PASSWORD=<redacted>" {
		t.Errorf("--set: %q", red.Set)
	}
	wantLabels := map[string]string{"istio-injection": "enabled", "istio.io/rev": "canary", "pod-security.kubernetes.io/enforce": "baseline", "owner": "redacted", "redacted-1": "redacted"}
	if !maps.Equal(red.Labels, wantLabels) {
		t.Errorf("labels: %v", red.Labels)
	}
	if !strings.Contains(red.Overlay, "ISTIO_META_DNS_CAPTURE: \"true\"") {
		t.Errorf("the overlay lost what was not secret:\n%s", red.Overlay)
	}
	clean := Settings{Set: s.Set[:1], Overlay: "spec:\n  meshConfig:\n    defaultConfig:\n      proxyMetadata:\n        ISTIO_META_DNS_CAPTURE: \"true\"\n",
		Labels: map[string]string{"istio-injection": "enabled", "istio.io/rev": "1-31-0", "team": "payments"}}
	if fs := ScanSettings(clean); len(fs) != 0 {
		t.Errorf("ordinary settings flagged: %+v", fs)
	}
	if r, err := RedactSettings(clean); err != nil || !reflect.DeepEqual(r, clean) {
		t.Errorf("ordinary settings redacted: %+v %v", r, err)
	}
}
