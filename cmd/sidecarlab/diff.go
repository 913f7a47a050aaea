package main

import (
	"io"

	"github.com/spf13/cobra"
)

func newDiffCmd(c *cli) *cobra.Command {
	var (
		files    fileFlags
		settings settingsFlags
		steps    stepFlags
		output   string
		unified  bool
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
			"{} diff -f deployment.yaml --annotate sidecar.istio.io/inject=false --unified"),
		Args: c.noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output == "yaml" {
				output = "text"
			}
			if err := c.checkOutput(output, "text", "json"); err != nil {
				return err
			}
			j, err := start(c, files, settings, steps)
			if err != nil {
				return err
			}
			defer j.Close()
			tl, err := j.eng.Timeline(c.ctx, j.manifest, j.steps, j.settings)
			if err != nil {
				return j.locate(err)
			}
			if output == "json" {
				if err := writeJSON(c.stdout, tl); err != nil {
					return err
				}
			} else {
				text, err := tl.Text(c.ctx, unified)
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
	return cmd
}
