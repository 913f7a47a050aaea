//go:build load

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLoad drives the real binary on 127.0.0.1 with mixed traffic — page loads, toggles (a new
// annotation value each time, so a real injection), batch tables and shares — from N clients
// until R requests or T have passed, and reports throughput, p50/p99 by kind, errors, and RSS.
// Run: SIDECARLAB_SERVE_ARGS="--rate-limit -1 --share-rate-limit -1" go test -tags load ./e2e -run TestLoad -v
// (the per-address limit is for a workshop behind one NAT, not for one load generator).
func TestLoad(t *testing.T) {
	clients := envInt("LOAD_CLIENTS", 16)
	total := envInt("LOAD_REQUESTS", 10000)
	limit := time.Duration(envInt("LOAD_SECONDS", 120)) * time.Second

	deployment := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: load\nspec:\n  replicas: 3\n  selector:\n    matchLabels:\n      app: load\n  template:\n    metadata:\n      labels:\n        app: load\n    spec:\n      containers:\n      - name: app\n        image: nginx\n"
	steps := `[{"key":"sidecar.istio.io/proxyMemory","value":"256Mi"}]`
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: clients}}

	// The views the clients load (one state, its permalink and batch table).
	res, err := client.PostForm(baseURL+"/", url.Values{"manifest": {deployment}, "steps": {steps}, "action": {"apply"}})
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	page := res.Request.URL.String()
	batch := strings.Replace(page, "/?", "/batch.json?", 1)

	var seq, errs atomic.Int64
	type sample struct {
		kind string
		d    time.Duration
	}
	var mu sync.Mutex
	var samples []sample
	do := func(kind string, req *http.Request) {
		status, d := timed(client, req)
		if status == 0 || status >= 400 {
			errs.Add(1)
		}
		mu.Lock()
		samples = append(samples, sample{kind, d})
		mu.Unlock()
	}
	rssBefore := rssMB(t, serverPID)
	stopSampling := peakRSS(t, serverPID)
	start := time.Now()
	deadline := start.Add(limit)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := seq.Add(1)
				if n > int64(total) || time.Now().After(deadline) {
					return
				}
				switch n % 10 {
				case 0, 1, 2, 3:
					req, _ := http.NewRequest(http.MethodGet, page, nil)
					do("page", req)
				case 4, 5, 6, 7:
					do("toggle", partialPost(url.Values{"manifest": {deployment}, "steps": {steps}, "add": {"sidecar.istio.io/proxyCPU"},
						"v:sidecar.istio.io/proxyCPU": {strconv.FormatInt(100+n, 10) + "m"}}))
				case 8:
					req, _ := http.NewRequest(http.MethodGet, batch, nil)
					do("batch", req)
				case 9:
					form := url.Values{"manifest": {deployment}, "steps": {fmt.Sprintf(`[{"key":"sidecar.istio.io/logLevel","value":"%s"}]`, []string{"debug", "info", "warning"}[c%3])}}
					req, _ := http.NewRequest(http.MethodPost, baseURL+"/share", strings.NewReader(form.Encode()))
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
					do("share", req)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	rssPeak := stopSampling()
	rssAfter := rssMB(t, serverPID)

	byKind := map[string][]time.Duration{}
	for _, s := range samples {
		byKind[s.kind] = append(byKind[s.kind], s.d)
		byKind["all"] = append(byKind["all"], s.d)
	}
	t.Logf("%d requests from %d clients in %v: %.0f req/s, %d errors; server RSS %.0f MB before, %.0f MB at peak, %.0f MB after",
		len(samples), clients, elapsed.Round(time.Millisecond), float64(len(samples))/elapsed.Seconds(), errs.Load(), rssBefore, rssPeak, rssAfter)
	for _, k := range []string{"all", "page", "toggle", "batch", "share"} {
		ds := byKind[k]
		slices.Sort(ds)
		if len(ds) == 0 {
			continue
		}
		t.Logf("  %-6s n=%5d  p50 %6.1f ms  p99 %6.1f ms", k, len(ds), ms(ds[len(ds)/2]), ms(ds[len(ds)*99/100]))
	}
	if errs.Load() != 0 {
		t.Errorf("%d errors", errs.Load())
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// timed sends req, reads its answer and says its status (0 when the request failed) and how long
// it took.
func timed(client *http.Client, req *http.Request) (status int, d time.Duration) {
	start := time.Now()
	resp, err := client.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		status = resp.StatusCode
	}
	return status, time.Since(start)
}

// partialPost is the page script's request for form: a POST of / asking for the results alone.
func partialPost(form url.Values) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, baseURL+"/", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Sidecarlab-Partial", "1")
	return req
}
