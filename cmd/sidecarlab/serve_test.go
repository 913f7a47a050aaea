package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
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

// TestGracefulShutdown: a request in flight when the server is told to stop still gets its whole
// answer; then the server is gone.
func TestGracefulShutdown(t *testing.T) {
	srv := startServe(t, "--db", filepath.Join(t.TempDir(), "links.db"))
	base := srv.base
	// A slow request: many Deployments in one manifest.
	var manifest strings.Builder
	for range 250 {
		manifest.WriteString(deployment + "---\n")
	}
	body, _ := json.Marshal(map[string]string{"manifest": manifest.String()})
	type result struct {
		status int
		n      int
		err    error
	}
	res := make(chan result, 1)
	go func() {
		resp, err := http.Post(base+"/api/v1/inject", "application/json", bytes.NewReader(body))
		if err != nil {
			res <- result{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		res <- result{status: resp.StatusCode, n: len(b), err: err}
	}()
	time.Sleep(300 * time.Millisecond) // the request is in flight
	srv.stop()                         // SIGTERM, as main's signal context does
	r := <-res
	if r.err != nil || r.status != http.StatusOK || r.n < 100000 {
		t.Fatalf("the in-flight request: status %d, %d bytes, %v", r.status, r.n, r.err)
	}
	select {
	case <-srv.done:
		if srv.err != nil {
			t.Fatalf("serve returned %v", srv.err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the server did not stop")
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatal("the server still answers after shutdown")
	}
	if !strings.Contains(srv.logs.String(), "shutting down") {
		t.Fatal("no shutdown in the log")
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
