package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestRaceTestsExist: every part of the Makefile's RACE_TESTS (the tests make race runs under the
// race detector) selects a test of the packages make race builds. A test renamed or moved would
// otherwise leave the race step without a word: go test runs no test for a -test.run that
// matches none, and passes.
func TestRaceTestsExist(t *testing.T) {
	root := filepath.Join("..", "..")
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	pattern, pkgs := raceStep(t, string(makefile))
	var names []string
	for _, p := range pkgs {
		names = append(names, testNames(t, filepath.Join(root, p))...)
	}
	if len(names) == 0 {
		t.Fatalf("no tests in the race step's packages %v", pkgs)
	}
	if missing := selectNone(pattern, names); len(missing) > 0 {
		t.Errorf("parts of RACE_TESTS select no test of %v (renamed or moved? update the Makefile): %q", pkgs, missing)
	}
	// The check can fail: a name that is no test, anchored or not.
	if missing := selectNone(`^TestLRU$|^TestGone$|Nowhere`, []string{"TestLRU", "TestLRUBytes"}); !slices.Equal(missing, []string{"^TestGone$", "Nowhere"}) {
		t.Errorf("a pattern with two parts that select nothing: %q", missing)
	}
}

// raceStep reads the Makefile's RACE_TESTS (each `RACE_TESTS :=` line, $(RACE_TESTS) in one
// standing for the lines before it) and the packages of the race target's go test.
func raceStep(t *testing.T, makefile string) (pattern string, pkgs []string) {
	t.Helper()
	for line := range strings.Lines(makefile) {
		if v, ok := strings.CutPrefix(line, "RACE_TESTS := "); ok {
			pattern = strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(v), "$(RACE_TESTS)", pattern), "$$", "$")
		}
	}
	m := regexp.MustCompile(`(?m)^race:.*\n\t.* -race -- ((?:\./\S+ )+)--`).FindStringSubmatch(makefile)
	if pattern == "" || m == nil {
		t.Fatal("no RACE_TESTS or race target in the Makefile")
	}
	return pattern, strings.Fields(m[1])
}

// testNames lists the Test functions of a package folder's _test.go files.
func testNames(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	decl := regexp.MustCompile(`(?m)^func (Test\w*)\(t \*testing\.T\)`)
	var names []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
			names = append(names, m[1])
		}
	}
	return names
}

// selectNone lists the parts of a -test.run pattern (its top-level alternatives) that match none
// of the names.
func selectNone(pattern string, names []string) []string {
	var missing []string
	for part := range strings.SplitSeq(pattern, "|") {
		re := regexp.MustCompile(part)
		if !slices.ContainsFunc(names, re.MatchString) {
			missing = append(missing, part)
		}
	}
	return missing
}
