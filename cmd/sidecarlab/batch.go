package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/sidecarlab/sidecarlab/engine"
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
	eng, err := engine.New(engine.Options{})
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
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "DOC\tKIND/NAME\tRESULT\tPROXY\tFIRST\tPOSTSTART\tPRESTOP\tREQUESTS\tLIMITS\tISTIO-INIT\tPROXY_CONFIG\tPITFALLS\tREPLICAS\tTOTAL REQUESTS")
		for _, row := range rows {
			first := ""
			if row.Proxy != "" {
				first = map[bool]string{true: "yes", false: "no"}[row.ProxyFirst]
			}
			result := row.Result
			if row.Reason != "" && row.Result != "injected" {
				result += " (" + row.Reason + ")"
			}
			fmt.Fprintf(tw, "%d\t%s/%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", row.Doc, row.Kind, row.Name, result, row.Proxy, first,
				row.PostStart, row.PreStop, row.Requests, row.Limits, row.Exclusions, row.ProxyConfig, strings.Join(row.Pitfalls, ","),
				replicasText(row), strings.TrimSpace("cpu="+row.Capacity.RequestsCPU+" memory="+row.Capacity.RequestsMem))
		}
		err = tw.Flush()
	default:
		return usageError{fmt.Sprintf("-o %q: want table, csv, markdown or json", f.output)}
	}
	if err != nil {
		return err
	}
	return reportDocErrors(r.Errors(), stderr)
}

func replicasText(r engine.BatchRow) string {
	switch {
	case r.Proxy == "":
		return ""
	case r.Capacity.Replicas == 0:
		return "per node"
	}
	return fmt.Sprint(r.Capacity.Replicas)
}
