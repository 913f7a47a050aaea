package main

import (
	"context"
	"fmt"
	"io"

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
	eng, err := engine.New(ctx, cliEngineOptions())
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
		if _, err := io.WriteString(stdout, tl.Text(unified)); err != nil {
			return err
		}
	}
	return reportDocErrors(tl.Steps[len(tl.Steps)-1].Errors(), stderr)
}
