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
	return batchRun(ctx, []byte(strings.Join(parts, "---\n")), s, f.output, stdout, stderr, progressTo(stderr))
}

// batchRun injects the manifest's documents on every core (engine.BatchStream) and writes each
// row as it is ready: CSV, Markdown and JSON row by row; the table, which must know every cell's
// width, with its total once all rows are in. No injected output is kept, only rows, and those
// only for the table. A document's error goes to stderr as it comes. progress, when not nil,
// gets a progress bar (see progressTo).
func batchRun(ctx context.Context, manifest []byte, s engine.Settings, format string, stdout, stderr, progress io.Writer) error {
	var rows []engine.BatchRow
	write := func(r engine.BatchRow) error {
		rows = append(rows, r)
		return nil
	}
	var bw *engine.BatchWriter
	switch format {
	case "csv", "markdown", "md", "json":
		f := engine.BatchFormat(format)
		if format == "md" {
			f = engine.BatchFormatMarkdown
		}
		bw, _ = engine.NewBatchWriter(stdout, f)
		write = bw.Write
	case "table":
	default:
		return usageError{fmt.Sprintf("-o %q: want table, csv, markdown or json", format)}
	}
	eng, err := engine.New(ctx, cliEngineOptions())
	if err != nil {
		return err
	}
	defer eng.Close()
	stream, err := eng.NewBatchStream(ctx, manifest, nil, s)
	if err != nil {
		return err
	}
	bar := newProgressBar(progress, stream.Len())
	failed := false
	err = stream.Run(ctx, func(it engine.BatchItem) error {
		// The bar is erased while the row (and an error line) is written, in case they go to the
		// same terminal, and drawn again with the new count.
		bar.clear()
		if it.Error != nil {
			failed = true
			fmt.Fprintln(stderr, "sidecarlab:", it.Error)
		}
		err := write(it.Row)
		bar.step()
		return err
	})
	bar.clear()
	if err != nil {
		return err
	}
	if bw != nil {
		err = bw.Close()
	} else {
		err = writeBatchTable(stdout, rows)
	}
	if err != nil {
		return err
	}
	if failed {
		return errSilent
	}
	return nil
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
