package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/wording"
)

// sarifValidator is the SARIF 2.1.0 schema as OASIS publishes it (testdata/README.md), formats
// asserted (a result's uri must be a URI reference).
func sarifValidator(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	s, err := c.Compile("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(s *jsonschema.Schema, doc []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

// TestSARIFSchema: the SARIF log validates against the standard's schema, with findings, with an
// ignored one, and with none; and the same log broken in any of a few ways does not (so the
// validation can fail).
func TestSARIFSchema(t *testing.T) {
	schema := sarifValidator(t)
	items := append(findings(t, "my dir/jobs/migrate.yaml", job), findings(t, "web.yaml", hostile)...)
	items[0].Ignored = IgnoredByFlag
	ignoredJob := strings.Replace(job, "  name: migrate\n", "  name: migrate\n  annotations:\n    sidecarlab.dev/ignore: job-classic-sidecar\n", 1)
	items = append(items, findings(t, "/abs/ignored.yaml", ignoredJob)...)
	var b bytes.Buffer
	if err := SARIF(&b, items); err != nil {
		t.Fatal(err)
	}
	if err := validate(schema, b.Bytes()); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	var none bytes.Buffer
	if err := SARIF(&none, nil); err != nil {
		t.Fatal(err)
	}
	if err := validate(schema, none.Bytes()); err != nil {
		t.Errorf("no findings: %v", err)
	}

	broken := map[string]func(log map[string]any){
		"no version":          func(log map[string]any) { delete(log, "version") },
		"version 2.0":         func(log map[string]any) { log["version"] = "2.0.0" },
		"a level SARIF lacks": func(log map[string]any) { result(log, 0)["level"] = "warn" },
		"line 0": func(log map[string]any) {
			result(log, 0)["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)["region"].(map[string]any)["startLine"] = 0
		},
		"no tool":         func(log map[string]any) { delete(log["runs"].([]any)[0].(map[string]any), "tool") },
		"message as text": func(log map[string]any) { result(log, 0)["message"] = "just text" },
	}
	for name, breakIt := range broken {
		var log map[string]any
		if err := json.Unmarshal(b.Bytes(), &log); err != nil {
			t.Fatal(err)
		}
		breakIt(log)
		doc, _ := json.Marshal(log)
		if validate(schema, doc) == nil {
			t.Errorf("%s: the schema accepted it", name)
		}
	}
}

func result(log map[string]any, i int) map[string]any {
	return log["runs"].([]any)[0].(map[string]any)["results"].([]any)[i].(map[string]any)
}

// TestSARIFContent: the driver lists every check as a rule with its words and severity; each
// result names its rule (by id and index), its level, its words and its place.
func TestSARIFContent(t *testing.T) {
	items := findings(t, "my dir/jobs/migrate.yaml", job)
	items[0].Ignored = IgnoredByFlag
	ignoredJob := strings.Replace(job, "  name: migrate\n", "  name: migrate\n  annotations:\n    sidecarlab.dev/ignore: job-classic-sidecar\n", 1)
	items = append(items, findings(t, "/abs/ignored.yaml", ignoredJob)...)
	var b bytes.Buffer
	if err := SARIF(&b, items); err != nil {
		t.Fatal(err)
	}
	var log sarifLog
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	d := log.Runs[0].Tool.Driver
	if d.Name != "sidecarlab" || !strings.Contains(d.Version, engine.Version().Istio) || !strings.Contains(d.Version, engine.Version().Module) {
		t.Errorf("driver %+v", d)
	}
	checks := engine.Checks()
	if len(d.Rules) != len(checks) {
		t.Fatalf("%d rules for %d checks", len(d.Rules), len(checks))
	}
	for i, c := range checks {
		r := d.Rules[i]
		if r.ID != string(c.ID) || r.ShortDescription.Text != wording.English.Summary(c.ID) || r.ShortDescription.Text == "" || r.DefaultConfiguration.Level != sarifLevel(c.Severity) {
			t.Errorf("rule %d: %+v for %+v", i, r, c)
		}
	}
	type place struct {
		Rule, Level, URI string
		Line, Col        int
		Suppression      string
	}
	var got []place
	for _, r := range log.Runs[0].Results {
		if d.Rules[r.RuleIndex].ID != r.RuleID {
			t.Errorf("result %s names rule %d, %s", r.RuleID, r.RuleIndex, d.Rules[r.RuleIndex].ID)
		}
		if r.Message.Text == "" {
			t.Errorf("result %s without words", r.RuleID)
		}
		l := r.Locations[0].PhysicalLocation
		p := place{r.RuleID, r.Level, l.ArtifactLocation.URI, l.Region.StartLine, l.Region.StartColumn, ""}
		for _, s := range r.Suppressions {
			p.Suppression = s.Kind + " " + s.Justification
		}
		got = append(got, p)
	}
	want := []place{
		{"unknown-istio-annotation", "warning", "my%20dir/jobs/migrate.yaml", 9, 9, "external --ignore"},
		{"job-classic-sidecar", "error", "my%20dir/jobs/migrate.yaml", 12, 7, ""},
		{"unknown-istio-annotation", "warning", "file:///abs/ignored.yaml", 11, 9, ""},
		{"job-classic-sidecar", "error", "file:///abs/ignored.yaml", 14, 7, "inSource sidecarlab.dev/ignore"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if lvl := sarifLevel(engine.SeverityInfo); lvl != "note" {
		t.Errorf("info is %q", lvl)
	}
}
