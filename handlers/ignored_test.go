package handlers

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/wording"
)

// jobIgnoring is jobYAML whose Job opts out of job-classic-sidecar with sidecarlab.dev/ignore.
var jobIgnoring = strings.Replace(jobYAML, "  name: once\n", "  name: once\n  annotations:\n    sidecarlab.dev/ignore: job-classic-sidecar\n", 1)

// TestIgnoredPitfalls: the Pitfalls tab says how many findings the manifest's
// sidecarlab.dev/ignore suppressed, and says nothing when it suppressed none.
func TestIgnoredPitfalls(t *testing.T) {
	h := newServer(t)
	cases := []struct {
		name, manifest string
		want           string // the note; "" for none
		finding        bool   // job-classic-sidecar is shown
	}{
		{"ignored by the annotation", jobIgnoring, wording.English.Ignored(1), false},
		{"no annotation", jobYAML, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := get(t, h, stateLink(t, api.State{Manifest: c.manifest})+"&tab=pitfalls")
			note := testid(r, "ignored-pitfalls")
			if got := strings.TrimSpace(note.Text()); got != c.want {
				t.Errorf("ignored note: want %q, got %q", c.want, got)
			}
			if got := testid(r, "finding-job-classic-sidecar").Length() == 1; got != c.finding {
				t.Errorf("job-classic-sidecar shown: want %v, got %v", c.finding, got)
			}
		})
	}
	if !strings.Contains(wording.English.Ignored(1), "1 finding") {
		t.Fatalf("wording.English.Ignored(1) = %q", wording.English.Ignored(1))
	}
}

// TestAPIIgnored: the API's findings part carries the ignored findings, worded like findings,
// and an empty list when the manifest ignores none.
func TestAPIIgnored(t *testing.T) {
	h := newServer(t)
	status, body, top := postAPI(t, h, "?include=findings", api.InjectRequest{Manifest: jobIgnoring})
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	var ignored, findings []wording.Finding
	if err := json.Unmarshal(top["ignored"], &ignored); err != nil {
		t.Fatalf("ignored: %v in %s", err, body)
	}
	if err := json.Unmarshal(top["findings"], &findings); err != nil {
		t.Fatal(err)
	}
	if len(ignored) != 1 || ignored[0].Check != "job-classic-sidecar" || ignored[0].Message == "" || ignored[0].Fix == nil || ignored[0].Fix.Text == "" {
		t.Errorf("ignored: want job-classic-sidecar with its words, got %s", top["ignored"])
	}
	for _, f := range findings {
		if f.Check == "job-classic-sidecar" {
			t.Errorf("job-classic-sidecar both found and ignored: %s", body)
		}
	}
	// None ignored: an empty list, as findings.
	if _, _, top := postAPI(t, h, "?include=findings", api.InjectRequest{Manifest: jobYAML}); string(top["ignored"]) != "[]" {
		t.Errorf("none ignored: want [], got %s", top["ignored"])
	}
	// Not asked for: absent.
	if _, _, top := postAPI(t, h, "?include=output", api.InjectRequest{Manifest: jobIgnoring}); top["ignored"] != nil {
		t.Errorf("ignored answered though findings not asked for: %s", top["ignored"])
	}
}
