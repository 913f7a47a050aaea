package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/handlers"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/store"
)

var (
	shareEngOnce sync.Once
	shareEng     *engine.Engine
	shareEngErr  error
)

// countedLinks is the real store behind the real adapter, counting writes.
type countedLinks struct {
	sqlLinks
	puts atomic.Int32
}

func (c *countedLinks) Put(ctx context.Context, l handlers.Link) (string, error) {
	c.puts.Add(1)
	return c.sqlLinks.Put(ctx, l)
}

// shareServer is the real handlers over the real engine and a SQLite store, on loopback.
func shareServer(t *testing.T, cfg handlers.Config) (*httptest.Server, *countedLinks) {
	t.Helper()
	shareEngOnce.Do(func() { shareEng, shareEngErr = engine.New(context.Background(), engine.Options{}) })
	if shareEngErr != nil {
		t.Fatal(shareEngErr)
	}
	db, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "links.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	links := &countedLinks{sqlLinks: sqlLinks{db: db}}
	cfg.Links = links
	// Deadlines only a hang reaches: a share does an injection, which a busy machine slows.
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = farAway
	}
	if cfg.QueueWait == 0 {
		cfg.QueueWait = farAway
	}
	srv := httptest.NewServer(handlers.New(slog.New(slog.NewTextHandler(io.Discard, nil)), func() handlers.Engine { return shareEng }, cfg))
	t.Cleanup(srv.Close)
	return srv, links
}

func runWithEnv(env map[string]string, args ...string) (stdout, stderr string, err error) {
	var out, errb bytes.Buffer
	err = run(context.Background(), args, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), err
}

func storedManifest(t *testing.T, link string) api.State {
	t.Helper()
	res, err := http.Get(strings.Replace(link, "/s/", "/api/v1/links/", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var st api.State
	if res.StatusCode != http.StatusOK || json.NewDecoder(res.Body).Decode(&st) != nil {
		t.Fatalf("%s: %d", link, res.StatusCode)
	}
	return st
}

const secretDeployment = testkit.Deployment + `        env:
        - name: DB_PASSWORD
          value: hunter2hunter2
`

func TestShareCommand(t *testing.T) {
	srv, links := shareServer(t, handlers.Config{})
	dir := t.TempDir()
	plain := filepath.Join(dir, "deployment.yaml")
	secret := filepath.Join(dir, "secret.yaml")
	for name, text := range map[string]string{plain: testkit.Deployment, secret: secretDeployment} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"SIDECARLAB_SERVER": srv.URL}

	// The server answers a path (no --public-url): the link is under --server.
	out, stderr, err := runWithEnv(env, "share", "-f", plain, "--annotate", "sidecar.istio.io/proxyCPU=200m")
	if err != nil || !strings.HasPrefix(out, srv.URL+"/s/") || !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
		t.Fatalf("share: %v %q %q", err, out, stderr)
	}
	link := strings.TrimSpace(out)
	if st := storedManifest(t, link); st.Manifest != testkit.Deployment || len(st.Steps) != 1 || st.Steps[0].Value != "200m" || st.Settings.Mode != "" {
		t.Fatalf("stored: %+v", st)
	}
	// The same view, the same link — and the form's Share of it gives the same link too.
	if again, _, _ := runWithEnv(env, "share", "-f", plain, "--annotate", "sidecar.istio.io/proxyCPU=200m", "--native-sidecars", "auto"); again != out {
		t.Fatalf("again: %q, first %q", again, out)
	}
	form := strings.NewReader(url.Values{"manifest": {testkit.Deployment}, "steps": {`[{"key":"sidecar.istio.io/proxyCPU","value":"200m"}]`}}.Encode())
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/share", form)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if res, err := noRedirect.Do(req); err != nil || srv.URL+res.Header.Get("Location") != link {
		t.Fatalf("the form's link: %v %v", err, res.Header.Get("Location"))
	}
	// --server wins over the environment.
	if out, _, err := runWithEnv(map[string]string{"SIDECARLAB_SERVER": "http://127.0.0.1:1"}, "share", "-f", plain, "--server", srv.URL); err != nil || !strings.HasPrefix(out, srv.URL+"/s/") {
		t.Fatalf("--server: %v %q", err, out)
	}

	// Secrets: listed on stderr, placed in their file, never echoed; nothing stored; exit 1.
	before := links.puts.Load()
	out, stderr, err = runWithEnv(env, "share", "-f", plain, "-f", secret)
	if err != errSilent || exitCode(err) != 1 || out != "" {
		t.Fatalf("secrets: %v %q", err, out)
	}
	want := secret + ": document 1, line 19, spec.template.spec.containers[web].env[DB_PASSWORD].value: a value whose name says it is a password"
	if !strings.Contains(stderr, want) || !strings.Contains(stderr, "--redact") || strings.Contains(stderr, "hunter2") {
		t.Fatalf("stderr:\n%s\nwant %q", stderr, want)
	}
	if links.puts.Load() != before {
		t.Fatal("the store was written")
	}
	// An --annotate value is scanned too; it is in no file.
	_, stderr, err = runWithEnv(env, "share", "-f", plain, "--annotate", "example.com/build-token=Zq8vR2mXk4TbW9yLp3NcA7hJ")
	if err != errSilent || !strings.Contains(stderr, "  --annotate: annotation step 1: a long random-looking string") || strings.Contains(stderr, "Zq8vR2mX") || links.puts.Load() != before {
		t.Fatalf("a secret --annotate value: %v\n%s", err, stderr)
	}
	// --redact stores the redacted manifest; --allow-secrets the manifest as it is.
	out, _, err = runWithEnv(env, "share", "-f", secret, "--redact")
	if st := storedManifest(t, strings.TrimSpace(out)); err != nil || strings.Contains(st.Manifest, "hunter2") || !strings.Contains(st.Manifest, "value: <redacted>") {
		t.Fatalf("--redact: %v %q", err, st.Manifest)
	}
	out, _, err = runWithEnv(env, "share", "-f", secret, "--allow-secrets")
	if st := storedManifest(t, strings.TrimSpace(out)); err != nil || st.Manifest != secretDeployment {
		t.Fatalf("--allow-secrets: %v %q", err, st.Manifest)
	}

	// The server's refusals come back in its words; mistakes in the call are usage errors.
	notK8s := filepath.Join(dir, "hello.yaml")
	if err := os.WriteFile(notK8s, []byte("hello: world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runWithEnv(env, "share", "-f", notK8s); err == nil || !strings.Contains(err.Error(), "no Kubernetes object") {
		t.Fatalf("nothing to share: %v", err)
	}
	for _, c := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"share", "-f", plain}, "--server URL (or SIDECARLAB_SERVER) is required"},
		{env, []string{"share", "-f", plain, "--server", "ftp://x"}, "want an http:// or https:// URL"},
		{env, []string{"share", "-f", plain, "--redact", "--allow-secrets"}, "choose one"},
		{env, []string{"share"}, "-f FILENAME"},
	} {
		if _, _, err := runWithEnv(c.env, c.args...); exitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v", c.args, err)
		}
	}
	if _, _, err := runWithEnv(map[string]string{"SIDECARLAB_SERVER": "http://127.0.0.1:1"}, "share", "-f", plain); err == nil || exitCode(err) != 1 {
		t.Errorf("no server there: %v", err)
	}
}

// TestShareCommandPublicURL: a server with --public-url answers absolute links; they are printed
// as they are.
func TestShareCommandPublicURL(t *testing.T) {
	srv, _ := shareServer(t, handlers.Config{PublicURL: "https://lab.example.com"})
	f := filepath.Join(t.TempDir(), "d.yaml")
	if err := os.WriteFile(f, []byte(testkit.Deployment), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runWithEnv(nil, "share", "-f", f, "--server", srv.URL)
	if err != nil || !strings.HasPrefix(out, "https://lab.example.com/s/") {
		t.Fatalf("%v %q", err, out)
	}
}

func TestPublicURLFlag(t *testing.T) {
	for in, want := range map[string]string{
		"":                                  "",
		"https://lab.example.com/":          "https://lab.example.com",
		"http://10.0.0.1:8080/sidecarlab/":  "http://10.0.0.1:8080/sidecarlab",
		"lab.example.com":                   "error",
		"https://lab.example.com/?x=1":      "error",
		"https://user:pw@lab.example.com":   "error",
		"javascript:alert(1)":               "error",
		"https://lab.example.com/#fragment": "error",
	} {
		got, err := publicURL(in)
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("publicURL(%q) = %q, want %q", in, got, want)
		}
	}
	// serve refuses a bad one before it listens.
	if _, _, err := runWithEnv(nil, "serve", "--addr", "127.0.0.1:0", "--public-url", "lab.example.com"); exitCode(err) != 2 || !strings.Contains(err.Error(), "--public-url") {
		t.Errorf("serve --public-url: %v", err)
	}
}
