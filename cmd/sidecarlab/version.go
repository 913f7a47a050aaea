package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sidecarlab/sidecarlab/engine"
)

func newVersionCmd(c *cli) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: c.T("cli.version.short"),
		Example: examples(c,
			"{} version",
			"{} version -o json"),
		Args: c.noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.checkOutput(output, "text", "json"); err != nil {
				return err
			}
			v := engine.Version()
			if output == "json" {
				return writeJSON(c.stdout, v)
			}
			_, err := fmt.Fprintln(c.stdout, c.T("cli.version.text", "Istio", v.Istio, "Module", v.Module, "Commit", v.Commit))
			return err
		},
	}
	c.outputFlag(cmd, &output, "text", "json")
	return cmd
}
