//go:build e2e || load

package e2e

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// baseURL is the server the tests drive; serverPID its process, for RSS; serverBin the binary,
// for a test that starts one of its own.
var (
	baseURL   string
	serverPID int
	serverBin string
)

// serveArgs are flags the server starts with, before SIDECARLAB_SERVE_ARGS.
var serveArgs []string

// atExit runs after the tests, before the server stops (e.g. the shared browser's stop).
var atExit []func()

func TestMain(m *testing.M) {
	os.Exit(func() int {
		dir, err := os.MkdirTemp("", "sidecarlab-e2e")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		bin, err := testkit.Binary(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		serverBin = bin
		stop, url, pid, err := serve(bin, filepath.Join(dir, "links.db"))
		if err != nil {
			fmt.Fprintln(os.Stderr, "serve:", err)
			return 1
		}
		defer stop()
		baseURL, serverPID = url, pid
		defer func() {
			for _, f := range atExit {
				f()
			}
		}()
		return m.Run()
	}())
}

var listenRE = regexp.MustCompile(`msg=listening addr=(\S+)`)

// serve starts the binary on a free loopback port, with extra flags, and waits for /readyz.
// SIDECARLAB_SERVE_ARGS adds flags; SIDECARLAB_SERVER_CPUS pins it to cores (taskset -c).
func serve(bin, db string, extra ...string) (stop func(), url string, pid int, err error) {
	args := append(append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db}, serveArgs...), extra...)
	if v := os.Getenv("SIDECARLAB_SERVE_ARGS"); v != "" {
		args = append(args, regexp.MustCompile(`\s+`).Split(v, -1)...)
	}
	name := bin
	if cpus := os.Getenv("SIDECARLAB_SERVER_CPUS"); cpus != "" {
		// Pin the server to these cores (the load generator runs on the others): taskset execs
		// the binary, so the pid stays the server's.
		name, args = "taskset", append([]string{"-c", cpus, bin}, args...)
	}
	cmd := exec.Command(name, args...)
	// Killed with the test binary even when go test's timeout ends it with a panic, which runs no
	// deferred stop: a server left running once outlived a timed-out suite by an hour.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, "", 0, err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", 0, err
	}
	stop = func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listenRE.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case a := <-addr:
		url = "http://" + a
	case <-time.After(2 * time.Minute): // far above any machine's time: only a hang gets here
		stop()
		return nil, "", 0, fmt.Errorf("the server did not say where it listens")
	}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if res, err := http.Get(url + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return stop, url, cmd.Process.Pid, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	return nil, "", 0, fmt.Errorf("not ready in 2 minutes")
}

// peakRSS samples the server's resident set every 20 ms until the returned function is called,
// which returns the highest sample.
func peakRSS(t testing.TB, pid int) (stop func() float64) {
	var peak float64
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			peak = max(peak, rssMB(t, pid))
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() float64 {
		close(done)
		<-finished
		return peak
	}
}

// rssMB is the server's resident set, from /proc.
func rssMB(t testing.TB, pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no VmRSS")
	}
	kb, _ := strconv.Atoi(string(m[1]))
	return float64(kb) / 1024
}
