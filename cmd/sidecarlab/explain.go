package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/provenance"
	"github.com/sidecarlab/sidecarlab/engine/upgrade"
	"github.com/sidecarlab/sidecarlab/wording"
)

func newExplainCmd(c *cli) *cobra.Command {
	var (
		files    fileFlags
		settings settingsFlags
		steps    stepFlags
		output   string
		doc      int
		up       upgradeFlags
	)
	cmd := &cobra.Command{
		Use:   "explain -f FILENAME [PATH]",
		Short: c.T("cli.explain.short"),
		Long:  c.T("cli.explain.long"),
		Example: examples(c,
			"# "+c.T("cli.explain.example.e1"),
			"{} explain -f deployment.yaml --annotate 'proxy.istio.io/config=holdApplicationUntilProxyStarts: true' \\",
			"    'spec.template.spec.containers[istio-proxy].lifecycle.postStart'",
			"",
			"# "+c.T("cli.explain.example.e2"),
			"{} explain -f manifests.yaml --doc 2 -o json",
			"",
			"# "+c.T("cli.explain.example.e3"),
			"{} explain --upgrade --mesh-from mesh.yaml -f deployment.yaml"),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return c.noArgs(cmd, args[1:])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if output == "yaml" {
				output = "text"
			}
			if err := c.checkOutput(output, "text", "json"); err != nil {
				return err
			}
			if doc < 0 {
				return usageError{c.T("cli.error.want", "Flag", "--doc", "Value", strconv.Itoa(doc), "Choices", "1, 2, …")}
			}
			if err := up.check(c, false); err != nil {
				return err
			}
			j, err := start(c, files, settings, steps)
			if err != nil {
				return err
			}
			defer j.Close()
			path := ""
			if len(args) == 1 {
				path = args[0]
			}
			if up.on {
				return up.explain(c, j, doc, path, output)
			}
			all, err := j.eng.Explain(c.ctx, j.manifest, j.steps, j.settings)
			if err != nil {
				return j.locate(err)
			}
			chosen, err := explained(c, all, doc, path)
			if err != nil {
				return err
			}
			if output == "json" {
				return writeJSON(c.stdout, chosen)
			}
			_, err = fmt.Fprint(c.stdout, explainText(c, chosen))
			return err
		},
	}
	files.register(c, cmd)
	settings.register(c, cmd)
	steps.register(c, cmd)
	c.outputFlag(cmd, &output, "text", "json")
	cmd.Flags().IntVar(&doc, "doc", 0, c.T("cli.flag.explain.doc"))
	up.register(c, cmd)
	return cmd
}

// explain says why each field the upgrade preview changes (in document doc, when it is not 0;
// at or under path, when it is not "") is there on each side, and which of the lines that wrote
// it differ between the two sides' templates.
func (f *upgradeFlags) explain(c *cli, j *session, doc int, path, output string) error {
	p, err := upgrade.NewPreview(c.ctx, j.eng, j.manifest, j.steps, j.settings, f.carries)
	if err != nil {
		return j.locate(err)
	}
	whys, err := p.Explain(c.ctx, j.eng, j.manifest, j.steps, j.settings)
	if err != nil {
		return j.locate(err)
	}
	chosen := []upgrade.Why{}
	for _, w := range whys {
		if (doc == 0 || w.Doc == doc) && (path == "" || w.Path == path || strings.HasPrefix(w.Path, path+".") || strings.HasPrefix(w.Path, path+"[")) {
			chosen = append(chosen, w)
		}
	}
	// A side that could not inject a document has nothing to compare there: it is said, as
	// diff --upgrade says it, and fails the command.
	failed := false
	for _, d := range p.Documents {
		if doc != 0 && d.Doc != doc {
			continue
		}
		if d.OldError != "" {
			failed = true
			fmt.Fprintln(c.stderr, "sidecarlab:", c.T("wording.upgrade.old-failed", "Error", d.OldError))
		}
		if d.NewError != "" {
			failed = true
			fmt.Fprintln(c.stderr, "sidecarlab:", c.T("wording.upgrade.new-failed", "Istio", engine.Version().Istio, "Error", d.NewError))
		}
	}
	switch {
	case len(chosen) == 0 && failed:
		return errSilent
	case len(whys) == 0:
		return usageError{c.T("cli.explain.upgrade-nothing")}
	case len(chosen) == 0:
		return usageError{c.T("cli.explain.no-path", "Doc", max(doc, 1), "Path", path)}
	}
	if output == "json" {
		if err := writeJSON(c.stdout, chosen); err != nil || !failed {
			return err
		}
		return errSilent
	}
	labels := [2]string{
		c.T("cli.explain.upgrade-old", "Revision", engine.RevisionName(j.settings.Install.Revision)),
		c.T("cli.explain.upgrade-new", "Istio", engine.Version().Istio),
	}
	var b strings.Builder
	for _, w := range chosen {
		b.WriteString(c.T("cli.explain.upgrade-field", "Path", w.Path, "Doc", w.Doc) + "\n")
		same := true
		for i, side := range [2][]engine.Provenance{w.Old, w.New} {
			b.WriteString("  " + labels[i] + ":\n")
			if len(side) == 0 {
				b.WriteString("    " + c.T("cli.explain.upgrade-none") + "\n")
			}
			for _, line := range strings.SplitAfter(explainText(c, side), "\n") {
				if line != "" {
					b.WriteString("    " + line)
				}
			}
			differ := [2]map[string][]int{w.OldDiffer, w.NewDiffer}[i]
			for _, t := range slices.Sorted(maps.Keys(differ)) {
				same = false
				b.WriteString("  " + c.T("cli.explain.upgrade-differ", "Template", t, "Lines", wording.Lines(differ[t])) + "\n")
			}
		}
		if same {
			b.WriteString("  " + c.T("cli.explain.upgrade-"+w.Unchanged()) + "\n")
		}
	}
	if _, err = fmt.Fprint(c.stdout, b.String()); err != nil || !failed {
		return err
	}
	return errSilent
}

// explained are the fields of document doc (the first document explained when doc is 0) at or
// under path (every field when path is ""): a path as the field diff writes it names a leaf, or
// everything under it.
func explained(c *cli, all []engine.Provenance, doc int, path string) ([]engine.Provenance, error) {
	out, doc, found := engine.FieldProvenance(all, doc, path)
	switch {
	case len(all) == 0:
		return nil, usageError{c.T("cli.explain.none")}
	case !found:
		return nil, usageError{c.T("cli.explain.no-doc", "Doc", doc)}
	case len(out) == 0:
		return nil, usageError{c.T("cli.explain.no-path", "Doc", doc, "Path", path)}
	}
	return out, nil
}

// explainText is the fields in the CLI's language: each path, then where it came from.
func explainText(c *cli, fields []engine.Provenance) string {
	var b strings.Builder
	for _, f := range fields {
		b.WriteString(f.Path + "\n")
		switch f.Source {
		case provenance.FromTemplate:
			id := "cli.explain.template"
			if f.Define != "" {
				id = "cli.explain.define"
			}
			if f.Whose == "mesh" {
				id += "-mesh" // the installation's own template, not Istio's
			}
			b.WriteString("  " + c.T(id, "Template", f.Template, "Define", f.Define, "Line", f.Line, "Text", strings.TrimSpace(f.Text)) + "\n")
			for _, cond := range f.Conditions {
				b.WriteString("  " + c.words().Branch(cond) + "\n")
			}
			for _, in := range f.Inputs {
				b.WriteString("  " + c.words().Reads(in) + "\n")
			}
		case provenance.FromInput:
			if f.InputLine > 0 {
				b.WriteString("  " + c.T("cli.explain.input-line", "Line", f.InputLine) + "\n")
			} else {
				b.WriteString("  " + c.T("cli.explain.input") + "\n")
			}
		case provenance.FromCode:
			b.WriteString("  " + c.T("cli.explain.code", "Func", f.Code.Func, "URL", f.Code.URL) + "\n")
		}
	}
	return b.String()
}
