package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine"
)

func runDiff(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var f injectFlags
	var unified bool
	fs := newFlagSet("diff", stderr)
	f.register(fs)
	fs.BoolVar(&unified, "unified", false, "print line diffs instead of field diffs")
	f.output = "text"
	if err := parse(fs, args); err != nil {
		return err
	}
	if f.output == "yaml" {
		f.output = "text"
	}
	if f.output != "text" && f.output != "json" {
		return usageError{fmt.Sprintf("-o %q: want text or json", f.output)}
	}
	manifest, steps, s, err := f.request(stdin)
	if err != nil {
		return err
	}
	eng, err := engine.New(engine.Options{})
	if err != nil {
		return err
	}
	defer eng.Close()
	tl, err := eng.Timeline(ctx, manifest, steps, s)
	if err != nil {
		return err
	}
	if f.output == "json" {
		if err := writeJSON(stdout, tl); err != nil {
			return err
		}
	} else {
		for _, st := range tl.Steps {
			writeStep(stdout, st, unified)
		}
	}
	var errs []*engine.InputError
	for _, d := range tl.Steps[len(tl.Steps)-1].Documents {
		if d.Error != nil {
			errs = append(errs, d.Error)
		}
	}
	return reportDocErrors(errs, stderr)
}

// writeStep prints one timeline row: a header naming the step, then its changes grouped by
// document.
func writeStep(w io.Writer, st *engine.StepResult, unified bool) {
	if st.Step == nil {
		fmt.Fprintf(w, "# step 0: injection (input → injected)\n")
	} else {
		fmt.Fprintf(w, "# step %d: %s\n", st.Index, st.Step)
	}
	if unified {
		if st.Unified == "" {
			fmt.Fprintln(w, "(no change)")
		}
		fmt.Fprint(w, st.Unified)
		fmt.Fprintln(w)
		return
	}
	if len(st.Changes) == 0 {
		fmt.Fprintln(w, "(no change)")
	}
	doc := 0
	for _, c := range st.Changes {
		if c.Doc != doc {
			doc = c.Doc
			d := st.Documents[doc-1]
			fmt.Fprintf(w, "document %d: %s\n", doc, docName(d))
		}
		fmt.Fprintf(w, "  %s\n", c)
	}
	fmt.Fprintln(w)
}

func docName(d engine.Document) string {
	name := d.Name
	if d.Namespace != "" {
		name = d.Namespace + "/" + name
	}
	return strings.TrimPrefix(d.Kind+"/"+name, "/")
}
