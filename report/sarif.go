package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/wording"
)

// The SARIF 2.1.0 objects sidecarlab writes: the few properties code scanning reads, named as
// the standard names them (OASIS SARIF 2.1.0, errata 01; its schema is in testdata/).
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool    sarifTool     `json:"tool"`
		Results []sarifResult `json:"results"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		Version        string      `json:"version"`
		InformationURI string      `json:"informationUri"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID                   string       `json:"id"`
		ShortDescription     sarifMessage `json:"shortDescription"`
		DefaultConfiguration struct {
			Level string `json:"level"`
		} `json:"defaultConfiguration"`
	}
	sarifMessage struct {
		Text string `json:"text"`
	}
	sarifResult struct {
		RuleID       string             `json:"ruleId"`
		RuleIndex    int                `json:"ruleIndex"`
		Level        string             `json:"level"`
		Message      sarifMessage       `json:"message"`
		Locations    []sarifLocation    `json:"locations"`
		Suppressions []sarifSuppression `json:"suppressions,omitempty"`
		Properties   sarifProperties    `json:"properties"`
	}
	sarifLocation struct {
		PhysicalLocation struct {
			ArtifactLocation struct {
				URI string `json:"uri"`
			} `json:"artifactLocation"`
			Region struct {
				StartLine   int `json:"startLine"`
				StartColumn int `json:"startColumn"`
			} `json:"region"`
		} `json:"physicalLocation"`
	}
	sarifSuppression struct {
		Kind          string `json:"kind"`
		Justification string `json:"justification,omitempty"`
	}
	// sarifProperties is a result's property bag: the engine's name for the field, and whether
	// the region is that field's (exact) or its nearest ancestor's in the file.
	sarifProperties struct {
		Doc   int    `json:"doc"`
		Path  string `json:"path,omitempty"`
		Exact bool   `json:"exact"`
		Fix   string `json:"fix,omitempty"`
	}
)

// sarifSchema is the SARIF 2.1.0 schema's address, as SARIF files name it.
const sarifSchema = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

// SARIF writes one SARIF 2.1.0 log with one run: sidecarlab's checks as rules, each finding as a
// result at its file, line and column. Ignored findings are results with a suppression (in
// source for the manifest's own opt-out, external for --ignore), so a dashboard shows them
// closed rather than forgetting them.
func SARIF(w io.Writer, items []Item) error {
	v := engine.Version()
	driver := sarifDriver{Name: "sidecarlab", Version: fmt.Sprintf("istio %s (%s)", v.Istio, v.Module),
		InformationURI: "https://github.com/sidecarlab/sidecarlab"}
	index := map[engine.CheckID]int{}
	for i, c := range engine.Checks() {
		r := sarifRule{ID: string(c.ID), ShortDescription: sarifMessage{wording.English.Summary(c.ID)}}
		r.DefaultConfiguration.Level = sarifLevel(c.Severity)
		driver.Rules = append(driver.Rules, r)
		index[c.ID] = i
	}
	results := []sarifResult{}
	for _, it := range items {
		f := it.Finding
		r := sarifResult{RuleID: string(f.Check), RuleIndex: index[f.Check], Level: sarifLevel(f.Severity),
			Message:    sarifMessage{wording.English.Message(f)},
			Properties: sarifProperties{Doc: f.Doc, Path: f.Path, Exact: it.Location.Exact, Fix: wording.English.FixText(f)}}
		var l sarifLocation
		l.PhysicalLocation.ArtifactLocation.URI = fileURI(it.File)
		l.PhysicalLocation.Region.StartLine = it.Location.Line
		l.PhysicalLocation.Region.StartColumn = it.Location.Column
		r.Locations = []sarifLocation{l}
		switch it.Ignored {
		case IgnoredByManifest:
			r.Suppressions = []sarifSuppression{{Kind: "inSource", Justification: engine.IgnoreAnnotation}}
		case IgnoredByFlag:
			r.Suppressions = []sarifSuppression{{Kind: "external", Justification: "--ignore"}}
		}
		results = append(results, r)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: sarifSchema, Version: "2.1.0",
		Runs: []sarifRun{{Tool: sarifTool{Driver: driver}, Results: results}}})
}

func sarifLevel(s engine.Severity) string {
	switch s {
	case engine.SeverityError:
		return "error"
	case engine.SeverityWarning:
		return "warning"
	}
	return "note"
}
