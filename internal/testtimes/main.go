// Command testtimes times `make test` and says where the time went. The Makefile's test targets
// run their steps through it, and `make test-times` prints what the last run recorded:
//
//	testtimes run DIR NAME -- COMMAND [ARG...]
//	testtimes report DIR
//
// run starts COMMAND and records its wall time as step NAME in DIR (steps.tsv: name, seconds,
// exit status, start as Unix seconds, CPU seconds; steps may run side by side). The CPU seconds
// are the user and system time of COMMAND and of the processes under it that their parents waited
// for (the Go processes of the browser tests, not Chromium's renderers, which its zygote leaves to
// init; nor the test control plane, started beside the steps). When COMMAND is `go test -json …`, its events are kept in DIR/NAME.json and the
// terminal gets what plain `go test` prints: a line per package, and the whole output of a
// package that failed. Any other COMMAND's output passes through. It exits with COMMAND's status.
//
// report prints the steps, the packages by the time their tests ran, the slowest tests, and the
// count of tests and subtests run, passed, failed and skipped.
//
// gotest is go test -json with the test binaries' links kept between runs, and gobuild go build
// with its binaries' links kept the same way (gotest.go).
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	code, err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testtimes:", err)
		if code == 0 {
			code = 2
		}
	}
	os.Exit(code)
}

const usage = "usage: testtimes run DIR NAME -- COMMAND [ARG...] | testtimes report DIR | testtimes gotest -json -bins DIR -cache DIR [-p N] -- [BUILD FLAG...] -- PKG... [-- TEST FLAG...] | testtimes gobuild -bins DIR -cache DIR [BUILD FLAG...] PKG..."

func run(args []string, stdout, stderr io.Writer) (int, error) {
	switch {
	case len(args) >= 5 && args[0] == "run" && args[3] == "--":
		return runStep(args[1], args[2], args[4:], stdout, stderr)
	case len(args) == 2 && args[0] == "report":
		return 0, report(args[1], stdout)
	case len(args) >= 1 && args[0] == "gotest":
		return goTest(args[1:], stdout, stderr)
	case len(args) >= 1 && args[0] == "gobuild":
		return goBuild(args[1:], stderr)
	}
	return 2, errors.New(usage)
}

// runStep runs one step and records it.
func runStep(dir, name string, argv []string, stdout, stderr io.Writer) (int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 2, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stderr = os.Stdin, stderr
	var events *os.File
	var filter *goTestFilter
	if slices.Contains(argv, "-json") {
		f, err := os.Create(filepath.Join(dir, name+".json"))
		if err != nil {
			return 2, err
		}
		defer f.Close()
		events, filter = f, newGoTestFilter(stdout)
		pr, pw := io.Pipe()
		cmd.Stdout = pw
		done := make(chan error, 1)
		go func() { done <- filter.copy(pr, events) }()
		defer func() { <-done }()
		defer pw.Close()
	} else {
		cmd.Stdout = stdout
	}
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var cpu time.Duration
	if ps := cmd.ProcessState; ps != nil {
		cpu = ps.UserTime() + ps.SystemTime() // wait4's: the waited-for processes under it included
	}
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	case err != nil:
		return 2, err
	}
	line := fmt.Sprintf("%s\t%.1f\t%d\t%.1f\t%.3f\n", name, wall.Seconds(), code, float64(start.UnixMilli())/1000, cpu.Seconds())
	f, ferr := os.OpenFile(filepath.Join(dir, "steps.tsv"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if ferr == nil {
		_, ferr = f.WriteString(line)
		ferr = errors.Join(ferr, f.Close())
	}
	return code, ferr
}

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// goTestFilter turns go test's events back into what plain go test prints.
type goTestFilter struct {
	out  io.Writer
	pkgs map[string]*bytes.Buffer // each running package's output so far
}

func newGoTestFilter(out io.Writer) *goTestFilter {
	return &goTestFilter{out: out, pkgs: map[string]*bytes.Buffer{}}
}

// copy reads events from r, keeps each line in keep, and prints the plain output.
func (g *goTestFilter) copy(r io.Reader, keep io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var err error
	for sc.Scan() {
		line := sc.Bytes()
		_, werr := keep.Write(append(line, '\n'))
		err = cmp.Or(err, werr)
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintf(g.out, "%s\n", line) // not an event: as it came
			continue
		}
		g.event(e)
	}
	_, _ = io.Copy(io.Discard, r) // let the command finish writing whatever happens
	return cmp.Or(err, sc.Err())
}

func (g *goTestFilter) event(e event) {
	switch e.Action {
	case "build-output":
		io.WriteString(g.out, e.Output)
		return
	case "output":
		b := g.pkgs[e.Package]
		if b == nil {
			b = &bytes.Buffer{}
			g.pkgs[e.Package] = b
		}
		if e.Test == "" && isSummary(e.Output) {
			return // printed when the package ends
		}
		b.WriteString(e.Output)
		return
	}
	if e.Test != "" || (e.Action != "pass" && e.Action != "fail" && e.Action != "skip") {
		return
	}
	// The package ended: its summary line, and all it printed if it failed.
	b := g.pkgs[e.Package]
	delete(g.pkgs, e.Package)
	switch e.Action {
	case "fail":
		if b != nil {
			g.out.Write(b.Bytes())
		}
		fmt.Fprintf(g.out, "FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
	case "skip":
		fmt.Fprintf(g.out, "?   \t%s\t[no test files]\n", e.Package)
	default:
		fmt.Fprintf(g.out, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
	}
}

// isSummary: a package's own last lines, which the filter writes itself.
func isSummary(s string) bool {
	for _, p := range []string{"ok  \t", "FAIL\t", "?   \t", "PASS\n", "FAIL\n"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// step is one line of steps.tsv.
type step struct {
	name    string
	seconds float64
	code    int
	cpu     float64 // -1: not recorded (testenv's set-up)
}

func report(dir string, w io.Writer) error {
	raw, err := os.ReadFile(filepath.Join(dir, "steps.tsv"))
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no times in %s: run make test first", dir)
	}
	if err != nil {
		return err
	}
	var steps []step
	var total, totalCPU float64
	first, last := math.Inf(1), math.Inf(-1) // the first step's start, the last one's end
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Split(l, "\t")
		if len(f) != 4 && len(f) != 5 {
			continue
		}
		s, _ := strconv.ParseFloat(f[1], 64)
		c, _ := strconv.Atoi(f[2])
		start, _ := strconv.ParseFloat(f[3], 64)
		cpu := -1.0
		if len(f) == 5 {
			cpu, _ = strconv.ParseFloat(f[4], 64)
			totalCPU += cpu
		}
		steps = append(steps, step{f[0], s, c, cpu})
		total += s
		first, last = min(first, start), max(last, start+s)
	}
	fmt.Fprintf(w, "Steps (wall time, and the CPU time of their processes, in the order they ended):\n")
	for _, s := range steps {
		cpu := ""
		if s.cpu >= 0 {
			cpu = fmt.Sprintf("  %8.1f CPU-s", s.cpu)
		}
		status := ""
		if s.code != 0 {
			status = fmt.Sprintf("  (exit %d)", s.code)
		}
		fmt.Fprintf(w, "  %-28s %8.1f s%s%s\n", s.name, s.seconds, cpu, status)
	}
	fmt.Fprintf(w, "  %-28s %8.1f s  %8.1f CPU-s\n", "all steps", total, totalCPU)
	if len(steps) > 0 {
		fmt.Fprintf(w, "  %-28s %8.1f s\n", "first start to last end", last-first)
	}
	fmt.Fprintln(w)

	var tests []testTime
	var counts [4]int // run, passed, failed, skipped
	var pkgs []testTime
	for _, s := range steps {
		evs, err := readEvents(filepath.Join(dir, s.name+".json"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		for _, e := range evs {
			switch {
			case e.Test == "" && (e.Action == "pass" || e.Action == "fail"):
				pkgs = append(pkgs, testTime{s.name, e.Package, "", e.Elapsed})
			case e.Test != "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
				counts[0]++
				counts[map[string]int{"pass": 1, "fail": 2, "skip": 3}[e.Action]]++
				if !strings.Contains(e.Test, "/") {
					tests = append(tests, testTime{s.name, e.Package, e.Test, e.Elapsed})
				}
			}
		}
	}
	byTime := func(a, b testTime) int { return cmp.Compare(b.seconds, a.seconds) }
	slices.SortStableFunc(pkgs, byTime)
	slices.SortStableFunc(tests, byTime)
	fmt.Fprintf(w, "Packages (time their tests ran, build not included):\n")
	for _, p := range pkgs {
		fmt.Fprintf(w, "  %-6s %-60s %8.1f s\n", p.step, p.pkg, p.seconds)
	}
	fmt.Fprintf(w, "\nSlowest tests (top-level, their subtests included):\n")
	for _, t := range tests[:min(len(tests), 25)] {
		fmt.Fprintf(w, "  %-6s %-40s %-36s %8.1f s\n", t.step, strings.TrimPrefix(t.pkg, "github.com/sidecarlab/sidecarlab/"), t.test, t.seconds)
	}
	fmt.Fprintf(w, "\nTests and subtests: %d run, %d passed, %d failed, %d skipped\n", counts[0], counts[1], counts[2], counts[3])
	return nil
}

type testTime struct {
	step, pkg, test string
	seconds         float64
}

func readEvents(path string) ([]event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Action != "" {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}
