package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/explain"
)

// runBatch injects several files (or one multi-document file) and prints one row per workload.
func runBatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f injectFlags
	fs := newFlagSet("batch", stderr)
	f.register(fs)
	f.output = "table"
	fs.Lookup("o").DefValue = "table"
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	files := fs.Args()
	if len(files) == 0 {
		return usageError{"batch needs at least one FILE"}
	}
	var parts []string
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		parts = append(parts, strings.TrimSuffix(string(b), "\n")+"\n")
	}
	f.file = "-"
	_, _, s, err := f.request(strings.NewReader(""))
	if err != nil {
		return err
	}
	eng, err := engine.New(ctx, cliEngineOptions())
	if err != nil {
		return err
	}
	defer eng.Close()
	r, err := eng.Inject(ctx, []byte(strings.Join(parts, "---\n")), nil, s)
	if err != nil {
		return err
	}
	rows := engine.Batch(r.Documents, r.Findings)
	switch f.output {
	case "csv":
		_, err = stdout.Write(engine.BatchCSV(rows))
	case "markdown", "md":
		_, err = stdout.Write(engine.BatchMarkdown(rows))
	case "json":
		_, err = stdout.Write(engine.BatchJSON(rows))
	case "table":
		err = writeBatchTable(stdout, rows)
	default:
		return usageError{fmt.Sprintf("-o %q: want table, csv, markdown or json", f.output)}
	}
	if err != nil {
		return err
	}
	return reportDocErrors(r.Errors(), stderr)
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
