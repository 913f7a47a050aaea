package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs syncBuffer
	done := make(chan error, 1)
	db := filepath.Join(t.TempDir(), "links.db")
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", db}, func(string) string { return "" }, strings.NewReader(""), io.Discard, &logs)
	}()
	addrRE := regexp.MustCompile(`msg=listening addr=(\S+)`)
	var base string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := addrRE.FindStringSubmatch(logs.String()); m != nil && strings.Contains(logs.String(), "msg=ready") {
			base = "http://" + m[1]
			break
		}
	}
	if base == "" {
		t.Fatalf("the server did not become ready:\n%s", logs.String())
	}
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
	cancel()                           // SIGTERM, as main's signal context does
	r := <-res
	if r.err != nil || r.status != http.StatusOK || r.n < 100000 {
		t.Fatalf("the in-flight request: status %d, %d bytes, %v", r.status, r.n, r.err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the server did not stop")
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatal("the server still answers after shutdown")
	}
	if !strings.Contains(logs.String(), "shutting down") {
		t.Fatal("no shutdown in the log")
	}
}
