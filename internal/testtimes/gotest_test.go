package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// writeModule writes a module of three packages: a, whose test passes; b, whose test fails; c,
// without tests.
func writeModule(t *testing.T, dir, aSays string) {
	t.Helper()
	files := map[string]string{
		"go.mod":      "module example.com/m\n\ngo 1.22\n",
		"a/a.go":      "package a\n\nfunc Says() string { return " + aSays + " }\n",
		"a/a_test.go": "package a\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestA(t *testing.T) {\n\tif _, err := os.Stat(\"a.go\"); err != nil {\n\t\tt.Fatal(\"not run from its folder:\", err)\n\t}\n\tt.Log(Says())\n}\n",
		"b/b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) { t.Fatal(\"broken\") }\n",
		"c/c.go":      "package c\n",
	}
	testkit.WriteFiles(t, dir, files)
}

func inode(t *testing.T, p string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// TestGoTest: gotest prints go test -json's events for every package — a's pass, b's failure,
// c's "[no test files]" — running each binary from its package's folder, and exits 1. A second
// run links nothing: the binaries it runs are those the first kept. After a change, a's binary is
// linked again into a new file, and the one the cache held before is left as it was (another run
// may be running it).
func TestGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module with the go command")
	}
	mod := t.TempDir()
	writeModule(t, mod, `"first"`)
	t.Chdir(mod)
	t.Setenv("GOWORK", "off")
	bins, cache := filepath.Join(t.TempDir(), "bins"), filepath.Join(t.TempDir(), "cache")
	gotest := func() (int, string) {
		t.Helper()
		var out, errb bytes.Buffer
		code, err := run([]string{"gotest", "-json", "-bins", bins, "-cache", cache, "-p", "2", "--", "--", "./a", "./b", "./c", "--", "-test.count=1"}, &out, &errb)
		if err != nil {
			t.Fatalf("gotest: %v\n%s", err, errb.String())
		}
		return code, out.String()
	}
	code, out := gotest()
	if code != 1 {
		t.Errorf("exit %d with a failing package, want 1", code)
	}
	for _, want := range []string{
		`"Action":"pass","Package":"example.com/m/a","Test":"TestA"`,
		`"Output":"    a_test.go:12: first\n"`,
		`"Action":"fail","Package":"example.com/m/b","Test":"TestB"`,
		`"Action":"fail","Package":"example.com/m/b","Elapsed"`,
		`"Output":"?   \texample.com/m/c\t[no test files]\n"`,
		`"Action":"skip","Package":"example.com/m/c"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the events lack %s:\n%s", want, out)
		}
	}
	var filtered bytes.Buffer
	if err := newGoTestFilter(&filtered).copy(strings.NewReader(out), &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(filtered.String(), "ok  \texample.com/m/a\t") || !strings.Contains(filtered.String(), "FAIL\texample.com/m/b\t") {
		t.Errorf("as go test prints them:\n%s", filtered.String())
	}
	first := inode(t, filepath.Join(cache, "a.test"))
	if !os.SameFile(first, inode(t, filepath.Join(bins, "a.test"))) {
		t.Error("the cache does not hold the binary that ran")
	}

	// Nothing changed: nothing is linked again.
	os.RemoveAll(bins) // a clean clone's: the binaries come from the cache
	if code, _ := gotest(); code != 1 {
		t.Errorf("second run: exit %d", code)
	}
	// (The go command links into a new file, as below; an up-to-date one it only touches.)
	if again := inode(t, filepath.Join(bins, "a.test")); !os.SameFile(first, again) {
		t.Error("a's binary was linked again with nothing changed")
	}

	// a changed: linked again, into a new file; the old one is as it was.
	writeModule(t, mod, `"second"`)
	code, out = gotest()
	if code != 1 || !strings.Contains(out, `"Output":"    a_test.go:12: second\n"`) {
		t.Errorf("after a change: exit %d, events:\n%s", code, out)
	}
	now := inode(t, filepath.Join(cache, "a.test"))
	if os.SameFile(first, now) {
		t.Error("the cache's a.test was written in place")
	}
}

// TestGoTestUsage: the separators are required.
func TestGoTestUsage(t *testing.T) {
	for _, args := range [][]string{
		{"gotest", "-json", "-bins", "x", "-cache", "y", "./a"},
		{"gotest", "-json", "-cache", "y", "--", "--", "./a"},
		{"gotest", "-json", "-bins", "x", "-cache", "y", "--", "-race", "--"},
	} {
		if code, err := run(args, &bytes.Buffer{}, &bytes.Buffer{}); code != 2 || err == nil {
			t.Errorf("%q: exit %d, %v", args, code, err)
		}
	}
}

// TestGoBuild: gobuild links a binary into bins and keeps it in the cache; from a clean clone's
// empty bins it links nothing while nothing changed, and after a change it links into a new file,
// leaving the cached one as it was.
func TestGoBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module with the go command")
	}
	mod := t.TempDir()
	writeModule(t, mod, `"first"`)
	testkit.WriteFiles(t, mod, map[string]string{"cmd/says/main.go": "package main\n\nimport \"example.com/m/a\"\n\nfunc main() { println(a.Says()) }\n"})
	t.Chdir(mod)
	t.Setenv("GOWORK", "off")
	bins, cache := filepath.Join(t.TempDir(), "bins"), filepath.Join(t.TempDir(), "cache")
	gobuild := func() {
		t.Helper()
		var errb bytes.Buffer
		if code, err := run([]string{"gobuild", "-bins", bins, "-cache", cache, "./cmd/says"}, &bytes.Buffer{}, &errb); code != 0 || err != nil {
			t.Fatalf("gobuild: exit %d, %v\n%s", code, err, errb.String())
		}
	}
	gobuild()
	first := inode(t, filepath.Join(cache, "says"))
	if !os.SameFile(first, inode(t, filepath.Join(bins, "says"))) {
		t.Error("the cache does not hold the binary built")
	}
	os.RemoveAll(bins)
	gobuild()
	if !os.SameFile(first, inode(t, filepath.Join(bins, "says"))) {
		t.Error("linked again with nothing changed")
	}
	writeModule(t, mod, `"second"`)
	gobuild()
	if now := inode(t, filepath.Join(cache, "says")); os.SameFile(first, now) {
		t.Error("the cache's binary was written in place")
	}
	if out, err := exec.Command(filepath.Join(bins, "says")).CombinedOutput(); err != nil || !strings.Contains(string(out), "second") {
		t.Errorf("the binary built after the change says %q (%v)", out, err)
	}
	if code, err := run([]string{"gobuild", "-bins", bins, "-cache", cache}, &bytes.Buffer{}, &bytes.Buffer{}); code != 2 || err == nil {
		t.Errorf("without a package: exit %d, %v", code, err)
	}
}
