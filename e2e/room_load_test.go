//go:build load

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// TestRoomLoad is a workshop: LOAD_LEARNERS learners (default 200) follow a room, each as the
// page's script does (the page, then its event stream, then at each move the room's page
// again), while the trainer moves it every LOAD_MOVE_MS (default 2,000) for LOAD_MOVES moves
// (default 30), through the API. It reports, per move and learner, how long the move's event
// took to arrive from the moment the trainer sent it (p50, p99, max), how long the page the event
// leads to took, the events that never came, the errors, and the server's CPU time and RSS. The
// server keeps its default limits: a room's learners behind one address (here 127.0.0.1) must
// stay under them.
// Run: SIDECARLAB_SERVER_CPUS=0 taskset -c 1 go test -tags load ./e2e -run TestRoomLoad -v
func TestRoomLoad(t *testing.T) {
	learners := envInt("LOAD_LEARNERS", 200)
	moves := envInt("LOAD_MOVES", 30)
	every := time.Duration(envInt("LOAD_MOVE_MS", 2000)) * time.Millisecond
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * learners}}

	req := api.RoomRequest{ShareRequest: api.ShareRequest{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment, Steps: []input.Step{
		{Key: "sidecar.istio.io/proxyCPU", Value: "200m"},
		{Key: "sidecar.istio.io/proxyMemory", Value: "256Mi"},
		{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true"},
	}}}}
	var made api.RoomResponse
	roomCall(t, client, http.MethodPost, baseURL+"/api/v1/rooms", "", req, &made)
	page := baseURL + "/r/" + made.Code

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu       sync.Mutex
		sentAt   = map[uint64]time.Time{}
		arrivals []time.Duration
		pages    []time.Duration
		got      = map[uint64]int{}
		errs     []string
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(errs) < 20 {
			errs = append(errs, fmt.Sprintf(format, args...))
		}
	}
	fetch := func(partial bool) (time.Duration, bool) {
		r, _ := http.NewRequestWithContext(ctx, http.MethodGet, page, nil)
		if partial {
			r.Header.Set("X-Sidecarlab-Partial", "1")
		}
		status, d := timed(client, r)
		if status != http.StatusOK && ctx.Err() == nil {
			fail("%s: %d", page, status)
			return d, false
		}
		return d, true
	}

	var joined, done sync.WaitGroup
	for range learners {
		joined.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			fetch(false)
			r, _ := http.NewRequestWithContext(ctx, http.MethodGet, page+"/events", nil)
			res, err := client.Do(r)
			if err != nil || res.StatusCode != http.StatusOK {
				fail("events: %v %v", err, res)
				joined.Done()
				return
			}
			defer res.Body.Close()
			joined.Done()
			sc := bufio.NewScanner(res.Body)
			var last uint64
			for sc.Scan() {
				line := sc.Text()
				if !strings.HasPrefix(line, "data: ") {
					continue
				}
				var ev struct{ Seq uint64 }
				if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev) != nil || ev.Seq <= last {
					continue
				}
				first := last == 0
				last = ev.Seq
				if first {
					continue // the room as it is when the stream opens
				}
				at := time.Now()
				d, ok := fetch(true)
				mu.Lock()
				if sent, known := sentAt[ev.Seq]; known {
					arrivals = append(arrivals, at.Sub(sent))
				}
				got[ev.Seq]++
				if ok {
					pages = append(pages, d)
				}
				mu.Unlock()
			}
		}()
	}
	joined.Wait()

	cpuBefore := cpuSeconds(t, serverPID)
	stopSampling := peakRSS(t, serverPID)
	rssBefore := rssMB(t, serverPID)
	start := time.Now()
	tick := time.NewTicker(every)
	for i := range moves {
		<-tick.C
		step := (i + 2) % 4 // 2, 3, 0, 1, …: the room starts at step 1
		req.Step = &step
		mu.Lock()
		sentAt[made.Seq+uint64(i)+1] = time.Now()
		mu.Unlock()
		var moved api.RoomResponse
		roomCall(t, client, http.MethodPut, baseURL+"/api/v1/rooms/"+made.Code, made.Token, req, &moved)
	}
	tick.Stop()
	// Until every learner has the last move's page, or a while after the last move.
	last := made.Seq + uint64(moves)
	testkit.WaitFor(t, "every learner has the last move", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return got[last] >= learners || time.Since(start) > time.Duration(moves)*every+30*time.Second
	})
	elapsed := time.Since(start)
	cpu := cpuSeconds(t, serverPID) - cpuBefore
	rssPeak := stopSampling()
	var counts api.RoomResponse
	roomCall(t, client, http.MethodGet, baseURL+"/api/v1/rooms/"+made.Code, made.Token, nil, &counts)
	cancel()
	done.Wait()

	mu.Lock()
	defer mu.Unlock()
	missing := 0
	for s := made.Seq + 1; s <= last; s++ {
		missing += learners - got[s]
	}
	slices.Sort(arrivals)
	slices.Sort(pages)
	q := func(ds []time.Duration, p int) float64 {
		if len(ds) == 0 {
			return 0
		}
		return ms(ds[min(len(ds)-1, len(ds)*p/100)])
	}
	t.Logf("%d learners, %d moves every %v in %v; the trainer saw %d following", learners, moves, every, elapsed.Round(time.Millisecond), counts.Following)
	t.Logf("  event after the move: n=%d  p50 %.1f ms  p99 %.1f ms  max %.1f ms; %d events never came", len(arrivals), q(arrivals, 50), q(arrivals, 99), q(arrivals, 100), missing)
	t.Logf("  the page it leads to: n=%d  p50 %.1f ms  p99 %.1f ms  max %.1f ms", len(pages), q(pages, 50), q(pages, 99), q(pages, 100))
	t.Logf("  server: %.2f CPU s (%.0f ms a move), RSS %.0f MB before, %.0f MB at peak; %d errors", cpu, cpu*1000/float64(moves), rssBefore, rssPeak, len(errs))
	for _, e := range errs {
		t.Error(e)
	}
	if missing > 0 {
		t.Errorf("%d events never came", missing)
	}
	if counts.Following != learners {
		t.Errorf("the trainer sees %d following, want %d", counts.Following, learners)
	}
}

// roomCall sends a room API request and reads its answer into out.
func roomCall(t *testing.T, client *http.Client, method, url, token string, body, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		js, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(js)
	}
	r, _ := http.NewRequest(method, url, rd)
	r.Header.Set("Content-Type", "application/json")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := client.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, url, res.StatusCode, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}

// cpuSeconds is the CPU time (user and system) the process has used.
func cpuSeconds(t *testing.T, pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}
