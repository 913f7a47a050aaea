package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/report"
)

// failOnLevels are --fail-on's values: a severity, or none.
var failOnLevels = []string{string(engine.SeverityInfo), string(engine.SeverityWarning), string(engine.SeverityError), "none"}

func newCheckCmd(c *cli) *cobra.Command {
	var (
		files    fileFlags
		settings settingsFlags
		output   string
		failOn   string
		ignore   []string
	)
	cmd := &cobra.Command{
		Use:   "check -f FILENAME",
		Short: c.T("cli.check.short"),
		Long:  c.T("cli.check.long", "IgnoreAnnotation", engine.IgnoreAnnotation),
		Example: examples(c,
			"# "+c.T("cli.check.example.e1"),
			"{} check -f manifests/ -R",
			"",
			"# "+c.T("cli.check.example.e2"),
			"{} check -f manifests/ -R -o github --fail-on error",
			"",
			"# "+c.T("cli.check.example.e3"),
			"{} check -f manifests/ -R -o sarif --fail-on none > sidecarlab.sarif",
			"",
			"# "+c.T("cli.check.example.e4"),
			"{} check -f job.yaml --set values.global.proxy.holdApplicationUntilProxyStarts=true --ignore job-classic-sidecar"),
		Args: c.noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.checkOutput(output, report.Formats...); err != nil {
				return err
			}
			if !slices.Contains(failOnLevels, failOn) {
				return usageError{c.T("cli.error.want", "Flag", "--fail-on", "Value", fmt.Sprintf("%q", failOn), "Choices", c.orList(failOnLevels))}
			}
			skip, err := ignoreSet(c, ignore)
			if err != nil {
				return err
			}
			return checkRun(c, files, settings, output, failOn, skip)
		},
	}
	files.register(c, cmd)
	settings.register(c, cmd)
	c.outputFlag(cmd, &output, report.Formats...)
	cmd.Flags().StringVar(&failOn, "fail-on", string(engine.SeverityWarning),
		c.T("cli.flag.check.fail_on", "Levels", c.orList(failOnLevels)))
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions(failOnLevels, cobra.ShellCompDirectiveNoFileComp))
	cmd.Flags().StringSliceVar(&ignore, "ignore", nil, c.T("cli.flag.check.ignore"))
	_ = cmd.RegisterFlagCompletionFunc("ignore", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return checkIDs(), cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// checkIDs are every check's id, in the order they are reported.
func checkIDs() []string {
	var ids []string
	for _, ch := range engine.Checks() {
		ids = append(ids, string(ch.ID))
	}
	return ids
}

// ignoreSet is --ignore's ids as a set; an id that is no check's is a usage error that lists them.
func ignoreSet(c *cli, ids []string) (map[string]bool, error) {
	set := map[string]bool{}
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if id == "" {
			continue
		}
		if !engine.IsCheck(id) {
			return nil, usageError{c.T("cli.error.not_a_check", "Value", fmt.Sprintf("%q", id), "Checks", strings.Join(checkIDs(), ", "))}
		}
		set[id] = true
	}
	return set, nil
}

func checkRun(c *cli, files fileFlags, settings settingsFlags, output, failOn string, skip map[string]bool) error {
	j, err := start(c, files, settings, stepFlags{})
	if err != nil {
		return err
	}
	defer j.Close()
	r, err := j.eng.Inject(c.ctx, j.manifest, nil, j.settings)
	if err != nil {
		return j.locate(err)
	}
	items := j.place(r.Documents, r.Findings, "")
	for i := range items {
		if skip[string(items[i].Finding.Check)] {
			items[i].Ignored = report.IgnoredByFlag
		}
	}
	byManifest := j.place(r.Documents, r.Ignored, report.IgnoredByManifest)
	if err := report.Write(c.stdout, output, c.loc(), append(items, byManifest...)); err != nil {
		return err
	}
	if note := c.words().Ignored(len(byManifest)); note != "" {
		fmt.Fprintln(c.stderr, "sidecarlab:", note)
	}
	if err := reportDocErrors(c, j.joined, r.Errors()); err != nil {
		return err
	}
	if failOn == "none" {
		return nil
	}
	for _, it := range items {
		if it.Ignored == "" && it.Finding.Severity.Rank() >= engine.Severity(failOn).Rank() {
			fmt.Fprintln(c.stderr, "sidecarlab:", c.T("cli.fail_on", "Severity", failOn))
			return errSilent
		}
	}
	return nil
}

// place puts findings of the joined manifest at their file, line and column; each finding's
// document is counted within its file too.
func (j joined) place(docs []engine.Document, fs []engine.Finding, ignored string) []report.Item {
	out := make([]report.Item, 0, len(fs))
	for i, l := range engine.Locate(docs, fs) {
		p := j.partOf(0, fs[i].Doc)
		l.Line = max(1, l.Line-p.line+1)
		f := fs[i]
		f.Doc -= p.docsBefore
		out = append(out, report.Item{File: reportPath(p.name), Finding: f, Location: l, Ignored: ignored})
	}
	return out
}

// reportPath is a file's name as CI tools want it: relative to the working directory (the
// repository's root, in CI) when it is under it, with forward slashes.
func reportPath(name string) string {
	if filepath.IsAbs(name) {
		if wd, err := os.Getwd(); err == nil {
			if rel, err := filepath.Rel(wd, name); err == nil && filepath.IsLocal(rel) {
				name = rel
			}
		}
	}
	return filepath.ToSlash(filepath.Clean(name))
}
