package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/sidecarlab/sidecarlab/engine/catalog"

	"github.com/spf13/cobra"
)

func newAnnotationsCmd(c *cli) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "annotations",
		Short: c.T("cli.annotations.short"),
		Long:  c.T("cli.annotations.long"),
		Example: examples(c,
			"# "+c.T("cli.annotations.example.e1"),
			"{} annotations",
			"",
			"# "+c.T("cli.annotations.example.e2"),
			"{} annotations -o json | jq -r '.[].name'"),
		Args: c.noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.checkOutput(output, "table", "json"); err != nil {
				return err
			}
			cat := catalog.DefaultCatalog()
			if output == "json" {
				return writeJSON(c.stdout, cat.All())
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, c.T("cli.annotations.header"))
			deprecated, hidden := c.T("cli.annotations.deprecated"), c.T("cli.annotations.hidden")
			for _, a := range cat.All() {
				status := a.FeatureStatus
				if a.Deprecated {
					status += deprecated
				}
				if a.Hidden {
					status += hidden
				}
				desc, _, _ := strings.Cut(a.Description, "\n")
				if len(desc) > 80 {
					desc = desc[:77] + "..."
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.Name, a.Kind, a.Group, status, desc)
			}
			return tw.Flush()
		},
	}
	c.outputFlag(cmd, &output, "table", "json")
	return cmd
}
