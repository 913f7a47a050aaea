package diff

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUnifiedDiff(t *testing.T) {
	if got := Unified("a\n", "a\n"); got != "" {
		t.Fatalf("equal texts gave %q", got)
	}
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"
	b := "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\n12\nthirteen\n"
	want := "--- before\n+++ after\n" +
		"@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n" +
		"@@ -10,3 +10,4 @@\n 10\n 11\n 12\n+thirteen\n"
	if d := cmp.Diff(want, Unified(a, b)); d != "" {
		t.Fatalf("(-want +got)\n%s", d)
	}
	// Changes closer than twice the context share a hunk.
	if got := Unified("1\n2\n3\n4\n", "x\n2\n3\ny\n"); strings.Count(got, "@@") != 2 {
		t.Fatalf("want one hunk, got\n%s", got)
	}
}
