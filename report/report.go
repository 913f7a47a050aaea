// Package report holds sidecarlab's output formats. For the check command: findings as text lines
// a person (or an editor's problem matcher) reads, JSON, SARIF 2.1.0 for code-scanning
// dashboards, and GitHub workflow commands that annotate a pull request, each finding at its
// file, line and column in the input (engine.Locate). For the batch command and the page's
// downloads: the batch's rows (engine.Batch) as CSV, Markdown and JSON, written row by row, and
// CSV read back. It only formats: which files, rows and findings, and the exit code, are the
// caller's; the words are package wording's.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/wording"
)

// Item is one finding at its place.
type Item struct {
	// File is the manifest's path as the user should see it: relative to the working directory
	// when it can be, with forward slashes.
	File     string
	Finding  engine.Finding
	Location engine.Location
	// Ignored says who opted out of the finding: "" (nobody: it is reported), IgnoredByManifest
	// or IgnoredByFlag. Only SARIF carries ignored findings (as suppressed results, which
	// dashboards keep closed); the other formats leave them out.
	Ignored string
}

// Who opted out of a finding.
const (
	IgnoredByManifest = "manifest" // engine.IgnoreAnnotation on the workload
	IgnoredByFlag     = "flag"     // the command's --ignore
)

// Formats are the formats Write knows, in the order a usage line lists them.
var Formats = []string{"text", "json", "sarif", "github"}

// Write writes items in format (one of Formats). The formats a person reads (text, github) are
// in l's language, and so are JSON's sentences (message, fix), its data being the same in every
// language; SARIF, whose runs declare no language, is in English.
func Write(w io.Writer, format string, l *i18n.Localizer, items []Item) error {
	switch format {
	case "text":
		return Text(w, wording.In(l), items)
	case "json":
		return JSON(w, wording.In(l), items)
	case "sarif":
		return SARIF(w, items)
	case "github":
		return GitHub(w, l, items)
	}
	return fmt.Errorf("unknown format %q", format)
}

// reported are the items nobody opted out of.
func reported(items []Item) []Item {
	var out []Item
	for _, it := range items {
		if it.Ignored == "" {
			out = append(out, it)
		}
	}
	return out
}

// Text writes one line per finding, as compilers and linters do, so editors and CI problem
// matchers pick them up: file:line:col: severity: message [check]. A line break inside a value
// is written as \n, so each finding stays on its line.
func Text(w io.Writer, words wording.Words, items []Item) error {
	for _, it := range reported(items) {
		_, err := fmt.Fprintf(w, "%s:%d:%d: %s: %s [%s]\n", oneLine(it.File), it.Location.Line, it.Location.Column,
			it.Finding.Severity, oneLine(words.Message(it.Finding)), it.Finding.Check)
		if err != nil {
			return err
		}
	}
	return nil
}

var lineBreaks = strings.NewReplacer("\r", `\r`, "\n", `\n`)

func oneLine(s string) string { return lineBreaks.Replace(s) }

// jsonItem is a finding in the JSON format.
type jsonItem struct {
	File     string          `json:"file"`
	Line     int             `json:"line"`
	Column   int             `json:"column"`
	Check    string          `json:"check"`
	Severity engine.Severity `json:"severity"`
	Message  string          `json:"message"`
	Fix      string          `json:"fix,omitempty"`
	// Doc and Path are where in the manifest's documents the finding is, as the engine names
	// it; Exact is false when the path is not in the file (injection adds it) and the line is
	// its nearest ancestor's.
	Doc   int    `json:"doc"`
	Path  string `json:"path,omitempty"`
	Exact bool   `json:"exact"`
}

// JSON writes the findings as one array (an empty one when there are none), their message and
// fix in words' language.
func JSON(w io.Writer, words wording.Words, items []Item) error {
	out := []jsonItem{}
	for _, it := range reported(items) {
		f := it.Finding
		out = append(out, jsonItem{File: it.File, Line: it.Location.Line, Column: it.Location.Column, Check: string(f.Check),
			Severity: f.Severity, Message: words.Message(f), Fix: words.FixText(f), Doc: f.Doc, Path: f.Path, Exact: it.Location.Exact})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// GitHub writes GitHub Actions workflow commands, which annotate the pull request's files:
// ::warning file=F,line=L,col=C,title=CHECK::message (an error is ::error, an info ::notice).
// Values are escaped as GitHub's toolkit escapes them, so nothing a manifest holds can end the
// line and start a command of its own. The messages, which people read, are in l's language.
func GitHub(w io.Writer, l *i18n.Localizer, items []Item) error {
	words := wording.In(l)
	for _, it := range reported(items) {
		f := it.Finding
		msg := words.Message(f)
		if fix := words.FixText(f); fix != "" {
			msg += l.T("cli.report.fix", "Fix", fix)
		}
		_, err := fmt.Fprintf(w, "::%s file=%s,line=%d,col=%d,title=%s::%s\n", githubLevel(f.Severity),
			escapeProperty(it.File), it.Location.Line, it.Location.Column, escapeProperty(string(f.Check)), escapeData(msg))
		if err != nil {
			return err
		}
	}
	return nil
}

func githubLevel(s engine.Severity) string {
	switch s {
	case engine.SeverityError:
		return "error"
	case engine.SeverityWarning:
		return "warning"
	}
	return "notice"
}

// escapeData and escapeProperty are GitHub's escaping of a command's message and of its
// properties' values (actions/toolkit, packages/core/src/command.ts).
var (
	dataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

func escapeData(s string) string     { return dataEscaper.Replace(s) }
func escapeProperty(s string) string { return propertyEscaper.Replace(s) }

// fileURI is a file's path as a SARIF artifact location: a relative reference (resolved against
// the repository's root by code scanning) or, for an absolute path, a file: URI.
func fileURI(file string) string {
	u := url.URL{Path: file}
	if strings.HasPrefix(file, "/") {
		u.Scheme = "file"
	}
	return u.String()
}
