package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// goTest is `go test -json` for the test binaries of a step, with their links kept between runs:
//
//	testtimes gotest -json -bins DIR -cache DIR [-p N] -- [BUILD FLAG...] -- PKG... [-- TEST FLAG...]
//
// go test links every package's test binary on every run, and with Istio and Kubernetes in them
// that was ~100 CPU-s of make unit for the same bytes each time. goTest builds them with
// `go test -c -o DIR/`, which links only a binary whose inputs changed: the go command compares
// the build ID inside the file it finds there with the one it would make. DIR starts as hard
// links to the binaries the last run left in the cache directory (~/.cache/sidecarlab/testbin,
// shared by every clone, as the go build cache is), and the binaries of this run are put back
// there at once (a new link renamed over the old one), so that runs in two clones at the same time
// never write a file the other runs. Then the binaries run as go test runs them — from their
// package's folder, up to N at once in the order given, through `go tool test2json` — and the
// events come out as go test -json prints them. A package without tests gets go test's
// "[no test files]". It exits 1 when a package failed, 2 when the build did.
func goTest(args []string, stdout, stderr io.Writer) (int, error) {
	fl := flag.NewFlagSet("gotest", flag.ContinueOnError)
	fl.SetOutput(stderr)
	bins := fl.String("bins", "", "where the test binaries are built and run from")
	cache := fl.String("cache", "", "where they are kept between runs")
	p := fl.Int("p", 2, "how many test binaries build and run at once")
	fl.Bool("json", true, "print go test -json's events (the only output there is; run reads it as go test -json's)")
	if err := fl.Parse(args); err != nil {
		return 2, err
	}
	parts := splitArgs(fl.Args())
	if *bins == "" || *cache == "" || *p < 1 || (len(parts) != 2 && len(parts) != 3) || len(parts[1]) == 0 {
		return 2, errors.New("usage: testtimes gotest -json -bins DIR -cache DIR [-p N] -- [BUILD FLAG...] -- PKG... [-- TEST FLAG...]")
	}
	build, patterns := parts[0], parts[1]
	var testFlags []string
	if len(parts) == 3 {
		testFlags = parts[2]
	}
	pkgs, err := listTestPackages(build, patterns)
	if err != nil {
		return 2, err
	}
	var withTests []string
	for _, pk := range pkgs {
		if pk.tests {
			withTests = append(withTests, pk.path)
		}
	}
	var goArgs []string
	if len(withTests) > 0 {
		goArgs = append(append([]string{"test", "-c", "-o", *bins + "/", "-p", strconv.Itoa(*p)}, build...), withTests...)
	}
	if err := buildKept(*bins, *cache, goArgs, stderr); err != nil {
		return 2, fmt.Errorf("building the test binaries: %w", err)
	}
	return runTestBinaries(pkgs, *bins, *p, testFlags, stdout, stderr), nil
}

// goBuild is `go build -o DIR/ [BUILD FLAG...] PKG...` with the links kept between runs as goTest
// keeps them: make test's server binary, ~14 CPU-s to link again for the same bytes in every clean
// clone.
func goBuild(args []string, stderr io.Writer) (int, error) {
	fl := flag.NewFlagSet("gobuild", flag.ContinueOnError)
	fl.SetOutput(stderr)
	bins := fl.String("bins", "", "where the binaries are built")
	cache := fl.String("cache", "", "where they are kept between runs")
	if err := fl.Parse(args); err != nil {
		return 2, err
	}
	if *bins == "" || *cache == "" || fl.NArg() == 0 {
		return 2, errors.New("usage: testtimes gobuild -bins DIR -cache DIR [BUILD FLAG...] PKG...")
	}
	if err := buildKept(*bins, *cache, append([]string{"build", "-o", *bins + "/"}, fl.Args()...), stderr); err != nil {
		return 1, err
	}
	return 0, nil
}

// buildKept runs the go command with goArgs (none: nothing to build) between two links: bins
// first gets the binaries the cache holds, so that the go command finds them up to date and
// links only what changed, and afterwards the cache gets what bins holds.
func buildKept(bins, cache string, goArgs []string, stderr io.Writer) error {
	for _, d := range []string{bins, cache} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := linkAll(cache, bins); err != nil {
		return err
	}
	if len(goArgs) > 0 {
		cmd := exec.Command("go", goArgs...)
		cmd.Stdout, cmd.Stderr = stderr, stderr
		if err := cmd.Run(); err != nil {
			return err
		}
	}
	return linkAll(bins, cache)
}

// splitArgs splits args at each "--".
func splitArgs(args []string) [][]string {
	parts := [][]string{{}}
	for _, a := range args {
		if a == "--" {
			parts = append(parts, []string{})
			continue
		}
		parts[len(parts)-1] = append(parts[len(parts)-1], a)
	}
	return parts
}

// testPackage is a package go test would test: its import path, its folder, whether it has tests.
type testPackage struct {
	path, dir string
	tests     bool
}

// listTestPackages lists the packages the patterns match, in go list's order (the order given,
// each once).
func listTestPackages(build, patterns []string) ([]testPackage, error) {
	args := append(append([]string{"list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{len .TestGoFiles}}\t{{len .XTestGoFiles}}"}, build...), patterns...)
	cmd := exec.Command("go", args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []testPackage
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(l, "\t")
		if len(f) != 4 {
			continue
		}
		pkgs = append(pkgs, testPackage{path: f[0], dir: f[1], tests: f[2] != "0" || f[3] != "0"})
	}
	return pkgs, nil
}

// binaryName is the file go test -c -o DIR/ writes a package's test binary to.
func binaryName(importPath string) string { return path.Base(importPath) + ".test" }

// linkAll makes every regular file of from a file of to, by a hard link (a copy across file
// systems) renamed over what to had, unless it is that file already.
func linkAll(from, to string) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.Contains(e.Name(), ".tmp-") {
			continue
		}
		src, dst := filepath.Join(from, e.Name()), filepath.Join(to, e.Name())
		if sameFile(src, dst) {
			continue
		}
		tmp := fmt.Sprintf("%s.tmp-%d", dst, os.Getpid())
		if err := os.Link(src, tmp); err != nil {
			if err := copyFile(src, tmp); err != nil {
				return err
			}
		}
		if err := os.Rename(tmp, dst); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	return nil
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// noTestsEvent is an event of a package without tests.
type noTestsEvent struct {
	Time    time.Time
	Action  string
	Package string
	Output  string `json:",omitempty"`
}

// runTestBinaries runs the packages' test binaries, p at once in the packages' order, and writes
// their events, each line whole; it returns 1 if any failed.
func runTestBinaries(pkgs []testPackage, bins string, p int, testFlags []string, stdout, stderr io.Writer) int {
	var mu sync.Mutex
	emit := func(line []byte) {
		mu.Lock()
		defer mu.Unlock()
		stdout.Write(line)
	}
	failed := false
	slots := make(chan struct{}, p)
	var wg sync.WaitGroup
	for _, pk := range pkgs {
		if !pk.tests {
			// What go test -json says of it.
			now := time.Now()
			for _, e := range []noTestsEvent{{now, "start", pk.path, ""}, {now, "output", pk.path, "?   \t" + pk.path + "\t[no test files]\n"}, {now, "skip", pk.path, ""}} {
				line, _ := json.Marshal(e)
				emit(append(line, '\n'))
			}
			continue
		}
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			if !runTestBinary(pk, filepath.Join(bins, binaryName(pk.path)), testFlags, emit, stderr) {
				mu.Lock()
				failed = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if failed {
		return 1
	}
	return 0
}

// runTestBinary runs one package's test binary as go test does, through test2json, and reports
// whether it passed.
func runTestBinary(pk testPackage, bin string, testFlags []string, emit func([]byte), stderr io.Writer) bool {
	abs, err := filepath.Abs(bin)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return false
	}
	if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "testtimes: no test binary %s for %s\n", abs, pk.path)
		return false
	}
	args := append([]string{"tool", "test2json", "-t", "-p", pk.path, abs, "-test.v=test2json", "-test.paniconexit0"}, testFlags...)
	cmd := exec.Command("go", args...)
	cmd.Dir = pk.dir
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return false
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, err)
		return false
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		emit(append(slices.Clone(sc.Bytes()), '\n'))
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			fmt.Fprintf(stderr, "testtimes: %s's tests were killed by %v\n", pk.path, ws.Signal())
		}
	}
	return err == nil
}
