//go:build load

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
)

// TestLoadAliases is issue 40's first finding against the real binary: four Lists of 5,000
// aliases of a Deployment at once (a few hundred bytes of link each, a new one every time, on the
// page, the raw output and the API), again and again for LOAD_SECONDS (default 30), while 16
// ordinary requests (a Deployment with a new annotation value each time) are sent beside them.
// Goal: every alias List gets its 4xx within the request timeout + 1 s, every ordinary request
// a 200 within 3 s, and the server's RSS stays under 400 MB (DESIGN.md). Before the estimate
// counted what a List expands to, one such request ran 52–95 s and four held the server for
// minutes at 1.8 GB.
// Run: make load (the server on one core, this generator on the other).
func TestLoadAliases(t *testing.T) {
	limit := time.Duration(envInt("LOAD_SECONDS", 30)) * time.Second
	timeout := time.Duration(envInt("LOAD_REQUEST_TIMEOUT", 15)) * time.Second
	client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 24}}
	stopSampling := peakRSS(t, serverPID)
	start := rssMB(t, serverPID)

	var n int
	attack := func(i int) *http.Request {
		st := api.State{Istio: engine.Version().Istio, Manifest: testkit.AliasList(5000) + fmt.Sprintf("# alias %d\n", i)}
		switch i % 3 {
		case 0:
			req, _ := http.NewRequest(http.MethodGet, baseURL+"/?s="+permalink.Encode(st), nil)
			return req
		case 1:
			req, _ := http.NewRequest(http.MethodGet, baseURL+"/injected.yaml?s="+permalink.Encode(st), nil)
			return req
		default:
			body, _ := json.Marshal(api.InjectRequest{Manifest: st.Manifest})
			req, _ := http.NewRequest(http.MethodPost, baseURL+"/api/v1/inject", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			return req
		}
	}
	ordinary := func(i int) *http.Request {
		st := api.State{Istio: engine.Version().Istio, Manifest: testkit.Deployment,
			Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: fmt.Sprintf("%dm", 100+i)}}}
		req, _ := http.NewRequest(http.MethodGet, baseURL+"/?s="+permalink.Encode(st), nil)
		return req
	}
	type answer struct {
		status int
		d      time.Duration
	}
	send := func(req *http.Request) answer {
		begin := time.Now()
		res, err := client.Do(req)
		if err != nil {
			t.Error(err)
			return answer{0, time.Since(begin)}
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return answer{res.StatusCode, time.Since(begin)}
	}
	var attacks, ordinaries []answer
	var mu sync.Mutex
	// launch sends req beside the others of its round and keeps its answer in into.
	launch := func(wg *sync.WaitGroup, req *http.Request, into *[]answer) {
		wg.Go(func() {
			a := send(req)
			mu.Lock()
			*into = append(*into, a)
			mu.Unlock()
		})
	}
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		var wg sync.WaitGroup
		for range 4 {
			n++
			launch(&wg, attack(n), &attacks)
		}
		for range 16 {
			n++
			launch(&wg, ordinary(n), &ordinaries)
		}
		wg.Wait()
	}
	peak := stopSampling()

	report := func(kind string, as []answer) (statuses map[int]int, worst time.Duration) {
		statuses = map[int]int{}
		var ds []time.Duration
		for _, a := range as {
			statuses[a.status]++
			ds = append(ds, a.d)
		}
		slices.Sort(ds)
		t.Logf("  %-9s n=%5d  p50 %7.1f ms  p99 %7.1f ms  max %7.1f ms  statuses %v", kind, len(ds), ms(ds[len(ds)/2]), ms(ds[len(ds)*99/100]), ms(ds[len(ds)-1]), statuses)
		return statuses, ds[len(ds)-1]
	}
	as, aWorst := report("aliases", attacks)
	os, oWorst := report("ordinary", ordinaries)
	t.Logf("server RSS: %.0f MB at start, %.0f MB at peak", start, peak)
	for status, c := range as {
		if status < 400 || status >= 500 {
			t.Errorf("%d alias Lists answered %d, want a 4xx", c, status)
		}
	}
	if aWorst > timeout+time.Second {
		t.Errorf("an alias List was answered after %v, past the %v timeout by more than a second", aWorst, timeout)
	}
	for status, c := range os {
		if status != http.StatusOK {
			t.Errorf("%d ordinary requests answered %d, want 200", c, status)
		}
	}
	if oWorst > 3*time.Second {
		t.Errorf("an ordinary request took %v beside the alias Lists, want at most 3 s", oWorst)
	}
	if peak >= 400 {
		t.Errorf("peak RSS %.0f MB, want under 400", peak)
	}
}
