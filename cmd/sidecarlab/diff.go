package main

import (
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/sidecarlab/sidecarlab/engine/upgrade"
)

func newDiffCmd(c *cli) *cobra.Command {
	var (
		files    fileFlags
		settings settingsFlags
		steps    stepFlags
		output   string
		unified  bool
		upgrade  upgradeFlags
		amb      ambientFlags
	)
	cmd := &cobra.Command{
		Use:   "diff -f FILENAME [--annotate KEY=VALUE]...",
		Short: c.T("cli.diff.short"),
		Long:  c.T("cli.diff.long"),
		Example: examples(c,
			"# "+c.T("cli.diff.example.e1"),
			"{} diff -f deployment.yaml",
			"",
			"# "+c.T("cli.diff.example.e2"),
			"{} diff -f deployment.yaml --annotate sidecar.istio.io/proxyCPU=200m \\",
			"    --annotate 'proxy.istio.io/config=holdApplicationUntilProxyStarts: true'",
			"",
			"# "+c.T("cli.diff.example.e3"),
			"{} diff -f deployment.yaml --annotate sidecar.istio.io/inject=false --unified",
			"",
			"# "+c.T("cli.diff.example.e4"),
			"{} diff --upgrade --mesh-from mesh.yaml -f deployment.yaml",
			"",
			"# "+c.T("cli.diff.example.e5"),
			"{} diff --ambient -f deployment.yaml --nodes 10"),
		Args: c.noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output == "yaml" {
				output = "text"
			}
			if err := c.checkOutput(output, "text", "json"); err != nil {
				return err
			}
			if err := upgrade.check(c, unified); err != nil {
				return err
			}
			if err := amb.check(c, cmd, unified, upgrade.on); err != nil {
				return err
			}
			j, err := start(c, files, settings, steps)
			if err != nil {
				return err
			}
			defer j.Close()
			if upgrade.on {
				return upgrade.run(c, j, output)
			}
			if amb.on {
				return amb.run(c, j, output)
			}
			tl, err := j.eng.Timeline(c.ctx, j.manifest, j.steps, j.settings)
			if err != nil {
				return j.locate(err)
			}
			if output == "json" {
				if err := writeJSON(c.stdout, tl); err != nil {
					return err
				}
			} else {
				text, err := c.words().TimelineText(c.ctx, tl, unified)
				if err != nil {
					return err
				}
				if _, err := io.WriteString(c.stdout, text); err != nil {
					return err
				}
			}
			return reportDocErrors(c, j.joined, tl.Steps[len(tl.Steps)-1].Errors())
		},
	}
	files.register(c, cmd)
	settings.register(c, cmd)
	steps.register(c, cmd)
	c.outputFlag(cmd, &output, "text", "json")
	cmd.Flags().BoolVar(&unified, "unified", false, c.T("cli.flag.diff.unified"))
	upgrade.register(c, cmd)
	amb.register(c, cmd)
	return cmd
}

// upgradeFlags are diff's upgrade preview: the manifest injected with the mesh the settings
// name (--mesh-from, istioctl's files or --context), then by the embedded Istio with that mesh's
// settings carried over (upgrade.NewPlan), and what changes between them.
type upgradeFlags struct {
	on             bool
	carry, noCarry []string
}

func (f *upgradeFlags) register(c *cli, cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&f.on, "upgrade", false, c.T("cli.flag.diff.upgrade"))
	fl.StringArrayVar(&f.carry, "carry", nil, c.T("cli.flag.diff.carry"))
	fl.StringArrayVar(&f.noCarry, "no-carry", nil, c.T("cli.flag.diff.no_carry"))
}

// check refuses the upgrade's flags without --upgrade, and --unified with it.
func (f *upgradeFlags) check(c *cli, unified bool) error {
	if !f.on && len(f.carry)+len(f.noCarry) > 0 {
		return usageError{c.T("cli.error.carry_without_upgrade")}
	}
	if f.on && unified {
		return usageError{c.T("cli.error.upgrade_unified")}
	}
	return nil
}

// carries is the plan's choice of keys: the default's, with --carry added and --no-carry taken.
func (f *upgradeFlags) carries(path string) bool {
	switch {
	case slices.Contains(f.noCarry, path):
		return false
	case slices.Contains(f.carry, path):
		return true
	}
	return !slices.Contains(upgrade.NotCarriedByDefault, path)
}

// run prints the preview of the session's manifest.
func (f *upgradeFlags) run(c *cli, j *session, output string) error {
	p, err := upgrade.NewPreview(c.ctx, j.eng, j.manifest, j.steps, j.settings, f.carries)
	if err != nil {
		return j.locate(err)
	}
	if output == "json" {
		err = writeJSON(c.stdout, p)
	} else {
		_, err = io.WriteString(c.stdout, c.words().UpgradePreview(p))
	}
	if err != nil {
		return err
	}
	// A side that could not inject a document (its message is in the output) fails the command.
	for _, d := range p.Documents {
		if d.OldError != "" || d.NewError != "" {
			return errSilent
		}
	}
	return nil
}
