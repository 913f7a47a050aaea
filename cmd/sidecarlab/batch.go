package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/explain"
)

// batchFormats are batch's output formats; "md" is markdown's short name.
var batchFormats = []string{"table", "csv", "markdown", "json"}

func newBatchCmd(c *cli) *cobra.Command {
	var (
		files    fileFlags
		settings settingsFlags
		output   string
	)
	cmd := &cobra.Command{
		Use:   "batch [-f FILENAME]... [FILE]...",
		Short: "Inject many workloads and print one row per workload",
		Long: `Inject every document of the files given (with -f, or as arguments) and print one row per workload:
what happened to it, where the proxy went, its resources, and the pitfalls found. -o csv, markdown
and json give the same rows as the playground's batch downloads.`,
		Example: examples(c,
			"# The lab's manifests as one table",
			"{} batch -f manifests/",
			"",
			"# A directory tree as CSV, with native sidecars",
			"{} batch -f manifests/ -R --native-sidecars true -o csv",
			"",
			"# Files as arguments, flags anywhere",
			"{} batch a.yaml b.yaml -o json"),
		RunE: func(cmd *cobra.Command, args []string) error {
			format := output
			if format == "md" {
				format = "markdown"
			}
			if err := checkOutput(format, batchFormats...); err != nil {
				return err
			}
			names := append(files.filenames, args...)
			if len(names) == 0 {
				return usageError{"batch needs at least one FILE (or -f FILENAME)\n" + seeHelp(cmd)}
			}
			j, err := start(c, fileFlags{filenames: names, recursive: files.recursive}, settings, stepFlags{})
			if err != nil {
				return err
			}
			defer j.Close()
			return batchRun(c, j, format)
		},
	}
	files.register(cmd)
	settings.register(cmd)
	outputFlag(cmd, &output, batchFormats...)
	return cmd
}

// batchRun injects the session's manifest and prints one row per workload in format.
func batchRun(c *cli, j *session, format string) error {
	r, err := j.eng.Inject(c.ctx, j.manifest, nil, j.settings)
	if err != nil {
		return j.locate(err)
	}
	rows := engine.Batch(r.Documents, r.Findings)
	switch format {
	case "csv":
		_, err = c.stdout.Write(engine.BatchCSV(rows))
	case "markdown":
		_, err = c.stdout.Write(engine.BatchMarkdown(rows))
	case "json":
		_, err = c.stdout.Write(engine.BatchJSON(rows))
	default:
		err = writeBatchTable(c.stdout, rows)
	}
	if err != nil {
		return err
	}
	return reportDocErrors(c, j.joined, r.Errors())
}

// writeBatchTable prints the engine's own rows and columns (as the CSV and Markdown downloads
// have them) aligned for a terminal: headers in capitals, an empty cell as "-", line breaks as
// spaces.
func writeBatchTable(w io.Writer, rows []engine.BatchRow) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	line := func(cells []string) {
		for i, c := range cells {
			c = strings.Join(strings.Fields(c), " ")
			if c == "" {
				c = "-"
			}
			cells[i] = c
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	cols := engine.BatchColumns()
	for i, c := range cols {
		cols[i] = strings.ToUpper(c)
	}
	line(cols)
	for _, r := range rows {
		line(r.Cells())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "total: "+explain.BatchTotal(engine.Total(rows)))
	return err
}
