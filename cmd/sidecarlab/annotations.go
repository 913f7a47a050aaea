package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/sidecarlab/sidecarlab/engine"
)

func runAnnotations(args []string, stdout, stderr io.Writer) error {
	var output string
	fs := newFlagSet("annotations", stderr)
	fs.StringVar(&output, "o", "table", "table or json")
	if err := parse(fs, args); err != nil {
		return err
	}
	cat := engine.DefaultCatalog()
	switch output {
	case "json":
		return writeJSON(stdout, cat.All())
	case "table":
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tKIND\tGROUP\tSTATUS\tDESCRIPTION")
		for _, a := range cat.All() {
			status := a.FeatureStatus
			if a.Deprecated {
				status += ", deprecated"
			}
			if a.Hidden {
				status += ", hidden"
			}
			desc, _, _ := strings.Cut(a.Description, "\n")
			if len(desc) > 80 {
				desc = desc[:77] + "..."
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.Name, a.Kind, a.Group, status, desc)
		}
		return tw.Flush()
	default:
		return usageError{fmt.Sprintf("-o %q: want table or json", output)}
	}
}
