//go:build load

package e2e

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMemoryUnderAttack repeats the memory attacks of issue 10 against the real binary and
// reports the server's RSS: eight concurrent API requests nesting 9,000 lists (once a 162 MB
// answer each), 100 distinct link states of about 1 MiB (once kept whole in the timeline memo),
// and links whose state inflates to 4 MiB (once allowed past the 1 MiB body limit). Goal: peak
// RSS under 400 MB, and back under 300 MB after.
// Run: make load (or SIDECARLAB_SERVE_ARGS="--rate-limit -1" go test -tags load ./e2e -run TestMemoryUnderAttack -v)
func TestMemoryUnderAttack(t *testing.T) {
	client := &http.Client{Timeout: 60 * time.Second}
	stopSampling := peakRSS(t, serverPID)
	start := rssMB(t, serverPID)
	status := func(res *http.Response, err error) int {
		if err != nil {
			t.Error(err)
			return 0
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	link := func(manifest string) string {
		js, _ := json.Marshal(map[string]any{"v": 1, "manifest": manifest})
		var buf bytes.Buffer
		zw, _ := flate.NewWriter(&buf, flate.BestCompression)
		zw.Write(js)
		zw.Close()
		return base64.RawURLEncoding.EncodeToString(buf.Bytes())
	}
	pod := func(name string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  containers:\n  - name: a\n    image: nginx\n", name)
	}

	for round := range 3 {
		// 1. Eight concurrent nesting requests: refused before any work (deeper than a server
		// reads, engine.Limits), so they cost a parse each.
		body, _ := json.Marshal(map[string]string{"manifest": pod("nest") + "extra: " + strings.Repeat("[", 9000) + strings.Repeat("]", 9000) + "\n"})
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if s := status(client.Post(baseURL+"/api/v1/inject", "application/json", bytes.NewReader(body))); s != http.StatusUnprocessableEntity {
					t.Errorf("nesting request: %d", s)
				}
			}()
		}
		wg.Wait()
		// 2. 100 distinct states of about 1 MiB (a Pod and a long comment), four at a time.
		comment := "# " + strings.Repeat("x", 1<<20-4<<10) + "\n"
		sem := make(chan struct{}, 4)
		for i := range 100 {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				s := link(comment + pod(fmt.Sprintf("p-%d-%d", round, i)))
				if st := status(client.Get(baseURL + "/injected.yaml?s=" + s)); st != http.StatusOK {
					t.Errorf("1 MiB state: %d", st)
				}
			}()
		}
		wg.Wait()
		// 3. States that inflate to 4 MiB: refused.
		for i := range 8 {
			s := link("# " + strings.Repeat("y", 4<<20-1<<10) + "\n" + pod(fmt.Sprintf("big-%d-%d", round, i)))
			if st := status(client.Get(baseURL + "/injected.yaml?s=" + s)); st != http.StatusRequestEntityTooLarge {
				t.Errorf("4 MiB state: %d, want 413", st)
			}
		}
	}
	peak := stopSampling()
	// Go returns freed memory to the system gradually: wait up to a minute for it.
	end := rssMB(t, serverPID)
	for deadline := time.Now().Add(time.Minute); end >= 300 && time.Now().Before(deadline); end = rssMB(t, serverPID) {
		time.Sleep(time.Second)
	}
	t.Logf("server RSS: %.0f MB at start, %.0f MB at peak, %.0f MB after", start, peak, end)
	if peak >= 400 {
		t.Errorf("peak RSS %.0f MB, want under 400", peak)
	}
	if end >= 300 {
		t.Errorf("RSS after %.0f MB, want under 300", end)
	}
}
