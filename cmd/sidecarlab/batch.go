package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/ambient"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/report"
	"github.com/sidecarlab/sidecarlab/wording"
)

// batchGCPercent is the batch command's GOGC.
const batchGCPercent = 400

// batchFormats are batch's output formats; "md" is markdown's short name.
var batchFormats = []string{"table", "csv", "markdown", "json"}

func newBatchCmd(c *cli) *cobra.Command {
	var (
		files    fileFlags
		settings settingsFlags
		output   string
		nodes    int
	)
	cmd := &cobra.Command{
		Use:   "batch [-f FILENAME]... [FILE]...",
		Short: c.T("cli.batch.short"),
		Long:  c.T("cli.batch.long"),
		Example: examples(c,
			"# "+c.T("cli.batch.example.e1"),
			"{} batch -f manifests/",
			"",
			"# "+c.T("cli.batch.example.e2"),
			"{} batch -f manifests/ -R --native-sidecars true -o csv",
			"",
			"# "+c.T("cli.batch.example.e3"),
			"{} batch a.yaml b.yaml -o json"),
		RunE: func(cmd *cobra.Command, args []string) error {
			format := output
			if format == "md" {
				format = "markdown"
			}
			if err := c.checkOutput(format, batchFormats...); err != nil {
				return err
			}
			if nodes < 1 || nodes > engine.MaxAmbientNodes {
				return usageError{c.T("cli.error.batch_nodes", "Max", engine.MaxAmbientNodes) + "\n" + c.seeHelp(cmd)}
			}
			names := append(files.filenames, args...)
			if len(names) == 0 {
				return usageError{c.T("cli.error.batch_files") + "\n" + c.seeHelp(cmd)}
			}
			j, err := start(c, fileFlags{filenames: names, recursive: files.recursive}, settings, stepFlags{})
			if err != nil {
				return err
			}
			defer j.Close()
			// The stream keeps little alive, so the collector runs often and takes a core's share
			// from the workers: a larger heap goal (still bounded: ~100 MB at 2,000 workloads, see
			// BENCHMARKS.md) cut the batch's time by a fifth.
			defer debug.SetGCPercent(debug.SetGCPercent(batchGCPercent))
			return batchRun(c.ctx, c.loc(), j.eng, j.joined, j.settings, format, nodes, c.stdout, c.stderr, progressTo(c.stderr))
		},
	}
	files.register(c, cmd)
	settings.register(c, cmd)
	c.outputFlag(cmd, &output, batchFormats...)
	cmd.Flags().IntVar(&nodes, "nodes", engine.DefaultAmbientNodes, c.T("cli.flag.batch.nodes"))
	return cmd
}

// batchRun injects the joined inputs' documents on every core (engine.BatchStream) and writes
// each row as it is ready: CSV, Markdown and JSON row by row; the table, which must know every
// cell's width, with its total once all rows are in. No injected output is kept, only rows, and
// those only for the table. A document's error goes to stderr as it comes, placed in its file.
// progress, when not nil, gets a progress bar (see progressTo). The table's headers and total,
// and the errors, are in l's language; CSV, Markdown and JSON are data and never change. When
// the installation has a ztunnel, the documents are read once before any is injected, for the
// ztunnel share's count of the pods in ambient (on nodes nodes).
func batchRun(ctx context.Context, l *i18n.Localizer, eng *engine.Engine, j joined, s engine.Settings, format string, nodes int, stdout, stderr, progress io.Writer) error {
	words := &cli{lang: l} // the CLI's wording helpers, in l's language
	var rows []engine.BatchRow
	write := func(r engine.BatchRow) error {
		rows = append(rows, r)
		return nil
	}
	var bw *report.BatchWriter
	switch format {
	case "csv", "markdown", "json":
		bw, _ = report.NewBatchWriter(stdout, report.BatchFormat(format))
		write = bw.Write
	case "table":
	default:
		return words.checkOutput(format, batchFormats...)
	}
	stream, err := eng.NewBatchStream(ctx, j.manifest, nil, s)
	if err != nil {
		return j.locate(err)
	}
	// The ambient column: besides the batch's own Namespace documents, it knows no namespace's
	// labels unless a cluster's namespace was read (--cluster with -n); the pods' own
	// istio.io/dataplane-mode and the installation's CNI agent decide the rest.
	install, err := eng.Install(ctx, s.Install)
	if err != nil {
		return j.locate(err)
	}
	cni, err := ambient.InstallCNI(install)
	if err != nil {
		return err
	}
	var share *engine.ZtunnelShare
	if _, ok := install.Ztunnel(); ok {
		written, err := stream.Pods(ctx)
		if err != nil {
			return err
		}
		cni.FillBatch(written, s.Namespace, stream.NamespaceLabels())
		share = engine.NewZtunnelShare(install, written, nodes)
	}
	bar := newProgressBar(progress, stream.Len())
	failed := false
	err = stream.Run(ctx, func(it engine.BatchItem) error {
		// The bar is erased while the row (and an error line) is written, in case they go to the
		// same terminal, and drawn again with the new count.
		bar.clear()
		if it.Error != nil {
			failed = true
			fmt.Fprintln(stderr, "sidecarlab:", words.errText(j.locate(it.Error)))
		}
		cni.FillRow(&it.Row, s.Namespace, stream.NamespaceLabels())
		share.Fill(&it.Row)
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
		err = writeBatchTable(stdout, l, rows, share)
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
// have them) aligned for a terminal, in l's language: the headers, and the cells a person reads
// as words (a result, yes or no, per node; wording.BatchCell), an empty cell as "-", line breaks
// as spaces; then the total, with ztunnel's on the nodes when share is not nil.
func writeBatchTable(w io.Writer, l *i18n.Localizer, rows []engine.BatchRow, share *engine.ZtunnelShare) error {
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
	cols := engine.BatchColumnNames()
	for i, c := range cols {
		cols[i] = l.T(columnID(c))
	}
	line(cols)
	words, all := wording.In(l), engine.BatchColumns()
	for _, r := range rows {
		cells := r.Cells()
		for i, c := range all {
			cells[i] = words.BatchCell(c.ID, r, cells[i])
		}
		line(cells)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	total := engine.Total(rows)
	total.Ztunnel = share
	_, err := fmt.Fprintln(w, l.T("cli.batch.total", "Total", wording.In(l).BatchTotal(total)))
	return err
}

// columnID is the catalog id of a batch column's header: "proxy first" is
// cli.batch.column.proxy_first.
func columnID(col string) string {
	id := []byte(strings.ToLower(col))
	for i, b := range id {
		if (b < 'a' || b > 'z') && (b < '0' || b > '9') {
			id[i] = '_'
		}
	}
	return "cli.batch.column." + string(id)
}
