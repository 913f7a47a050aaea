package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// syncBuffer is a bytes.Buffer safe to read while the server writes its log into it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// heldRequest is a POST in flight whose body the test holds back: it asks with Expect:
// 100-continue, and the server's handler asks for the body (so the server has the request in
// hand) before the test sends it (send).
type heldRequest struct {
	body   []byte
	w      *io.PipeWriter
	result chan heldResult
}

type heldResult struct {
	status, n int
	err       error
}

// holdRequest posts body to url as JSON and returns once the server's handler has asked for the
// body: the request is in flight, whatever the machine's speed.
func holdRequest(t *testing.T, url string, body []byte) *heldRequest {
	t.Helper()
	pr, pw := io.Pipe()
	h := &heldRequest{body: body, w: pw, result: make(chan heldResult, 1)}
	asked := make(chan struct{})
	var once sync.Once
	trace := &httptrace.ClientTrace{Got100Continue: func() { once.Do(func() { close(asked) }) }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodPost, url, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Expect", "100-continue")
	req.ContentLength = int64(len(body))
	// The client waits for the server's 100 Continue before it reads the body from the pipe.
	client := &http.Client{Timeout: testkit.Patience, Transport: &http.Transport{ExpectContinueTimeout: testkit.Patience}}
	go func() {
		resp, err := client.Do(req)
		if err != nil {
			h.result <- heldResult{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		h.result <- heldResult{status: resp.StatusCode, n: len(b), err: err}
	}()
	select {
	case <-asked:
	case r := <-h.result:
		t.Fatalf("the server answered before it asked for the body: %d %v", r.status, r.err)
	case <-time.After(testkit.Patience):
		t.Fatalf("the server did not ask for the body of %s in %v", url, testkit.Patience)
	}
	return h
}

// send sends the body held back and returns the answer.
func (h *heldRequest) send(t *testing.T) heldResult {
	t.Helper()
	go func() {
		_, _ = h.w.Write(h.body)
		_ = h.w.Close()
	}()
	return <-h.result
}

// TestGracefulShutdown: a request in flight when the server is told to stop — its body sent
// only once the shutdown began — still gets its whole answer (a large one: many Deployments);
// then the server is gone.
func TestGracefulShutdown(t *testing.T) {
	srv := startServe(t, "--db", filepath.Join(t.TempDir(), "links.db"))
	base := srv.base
	var manifest strings.Builder
	for range 250 {
		manifest.WriteString(testkit.Deployment + "---\n")
	}
	body, _ := json.Marshal(map[string]string{"manifest": manifest.String()})
	req := holdRequest(t, base+"/api/v1/inject", body)
	srv.stop() // SIGTERM, as main's signal context does
	testkit.WaitFor(t, "serve shutting down", func() bool { return strings.Contains(srv.logs.String(), "shutting down") })
	r := req.send(t)
	if r.err != nil || r.status != http.StatusOK || r.n < 100000 {
		t.Fatalf("the in-flight request: status %d, %d bytes, %v", r.status, r.n, r.err)
	}
	srv.waitStopped(t)
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatal("the server still answers after shutdown")
	}
}

// TestServeCPUProfile: --cpuprofile writes a profile pprof reads when the server stops; without
// it nothing is written.
func TestServeCPUProfile(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	srv := startServe(t, "--db", filepath.Join(t.TempDir(), "links.db"), "--cpuprofile", prof)
	if res, err := http.Get(srv.base + "/"); err == nil {
		res.Body.Close()
	}
	srv.stop()
	<-srv.done
	f, err := os.Open(prof)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := profile.Parse(f); err != nil {
		t.Fatalf("not a profile: %v", err)
	}
}

// TestWriteTimeout: the server gives an answer its work's whole timeout and time to be written
// after it: a --request-timeout above the old fixed minute is not cut; a short one still gets
// the minute.
func TestWriteTimeout(t *testing.T) {
	for _, c := range []struct{ request, atLeast time.Duration }{{90 * time.Second, 2 * time.Minute}, {5 * time.Second, time.Minute}} {
		if got := writeTimeout(c.request); got < c.atLeast || got <= c.request {
			t.Errorf("--request-timeout=%v: write timeout %v, want at least %v", c.request, got, c.atLeast)
		}
	}
}
