package main

import (
	"bufio"
	"fmt"
	"io"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/spf13/cobra"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
)

func newInjectCmd(c *cli) *cobra.Command {
	var (
		files    fileFlags
		settings settingsFlags
		steps    stepFlags
		output   string
		failOn   string
		partial  bool
	)
	cmd := &cobra.Command{
		Use:   "inject -f FILENAME",
		Short: c.T("cli.inject.short"),
		Long:  c.T("cli.inject.long"),
		Example: examples(c,
			"# "+c.T("cli.inject.example.e1"),
			"{} inject -f deployment.yaml | kubectl apply -f -",
			"",
			"# "+c.T("cli.inject.example.e2"),
			"{} inject -f manifests/ -R --native-sidecars true",
			"",
			"# "+c.T("cli.inject.example.e3"),
			"{} inject -f job.yaml --kubernetes-version 1.34 --annotate sidecar.istio.io/proxyCPU=200m",
			"",
			"# "+c.T("cli.inject.example.e4"),
			"cat pod.yaml | {} inject -f - --fail-on error -o json"),
		Args: c.noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.checkOutput(output, "yaml", "json"); err != nil {
				return err
			}
			if partial && output != "yaml" {
				return usageError{c.T("cli.error.partial_yaml", "Output", output)}
			}
			if failOn != "" && failOn != string(engine.SeverityWarning) && failOn != string(engine.SeverityError) {
				return usageError{c.T("cli.error.want", "Flag", "--fail-on", "Value", fmt.Sprintf("%q", failOn), "Choices", c.orList([]string{"warning", "error"}))}
			}
			return injectRun(c, files, settings, steps, output, engine.Severity(failOn), partial)
		},
	}
	files.register(c, cmd)
	settings.register(c, cmd)
	steps.register(c, cmd)
	c.outputFlag(cmd, &output, "yaml", "json")
	cmd.Flags().StringVar(&failOn, "fail-on", "", c.T("cli.flag.inject.fail_on"))
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions([]string{"warning", "error"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.Flags().BoolVar(&partial, "partial", false, c.T("cli.flag.inject.partial"))
	return cmd
}

func injectRun(c *cli, files fileFlags, settings settingsFlags, steps stepFlags, output string, failOn engine.Severity, partial bool) error {
	// --annotate is the annotation written into each workload of the files: a value Istio refuses
	// fails each document as it would in the file, with Istio's message, and --partial prints what
	// istioctl prints for such a file.
	opts := cliEngineOptions()
	opts.StepsAsWritten = true
	j, err := startWith(c, files, settings, steps, opts)
	if err != nil {
		return err
	}
	defer j.Close()
	r, lines, err := injectLogged(c, j, opts.Workers)
	// What Istio's logger wrote first, as istioctl prints it while it injects: before its
	// warnings and its error (which it is not said twice with).
	var reported []error
	if err != nil {
		reported = append(reported, err)
	} else {
		for _, e := range r.Errors() {
			reported = append(reported, e)
		}
	}
	printIstioLines(c.stderr, lines, reported)
	if err != nil {
		return j.locate(err)
	}
	if errs := r.Errors(); len(errs) > 0 {
		// All or nothing: a pipe into kubectl apply must not apply half the input. With
		// --partial, what istioctl prints: the documents before the first that failed, and the
		// warnings Istio gave for them.
		if partial {
			var before engine.Injection
			for _, d := range r.Documents {
				if d.Error != nil {
					break
				}
				before.Documents = append(before.Documents, d)
			}
			if err := writeOutput(c.stdout, before.Documents); err != nil {
				return err
			}
			printWarnings(c, before.Warnings())
		}
		return reportDocErrors(c, j.joined, errs)
	}
	if output == "json" {
		out := api.Injection{Documents: r.Documents, Findings: c.words().Findings(r.Findings)}
		if err := writeJSON(c.stdout, out); err != nil {
			return err
		}
	} else if err := writeOutput(c.stdout, r.Documents); err != nil {
		return err
	}
	printWarnings(c, r.Warnings())
	failed := false
	// Each pitfall at its file, line and column, its document counted within that file.
	for _, it := range j.place(r.Documents, r.Findings, "") {
		fmt.Fprintf(c.stderr, "%s: %s:%d:%d: %s\n", c.T("cli.pitfall"), it.File, it.Location.Line, it.Location.Column, c.words().Line(it.Finding))
		if failOn != "" && it.Finding.Severity.Rank() >= failOn.Rank() {
			failed = true
		}
	}
	if note := c.words().Ignored(len(r.Ignored)); note != "" {
		fmt.Fprintln(c.stderr, "sidecarlab:", note)
	}
	if failed {
		fmt.Fprintln(c.stderr, "sidecarlab:", c.T("cli.fail_on", "Severity", failOn))
		return errSilent
	}
	return nil
}

// injectLogged injects the session's manifest with Istio's logger captured (captureIstio). The
// engine's workers inject several documents at once, so the entries of different documents may
// come in any order: when there are two entries or more and several documents, the manifest is
// injected again one document after another (InjectInOrder), as istioctl injects them, for the
// entries in istioctl's order. That costs a second injection, only then; the installation is
// the one the first rendered.
func injectLogged(c *cli, j *session, workers int) (*engine.Injection, *istioLines, error) {
	lines, release, err := captureIstio()
	if err != nil {
		return nil, nil, err
	}
	r, err := j.eng.Inject(c.ctx, j.manifest, j.steps, j.settings)
	release()
	if err != nil || lines.entries() < 2 || len(r.Documents) < 2 || workers <= 1 {
		return r, lines, err
	}
	if lines, release, err = captureIstio(); err != nil {
		return nil, nil, err
	}
	defer release()
	r, err = j.eng.InjectInOrder(c.ctx, j.manifest, j.steps, j.settings)
	return r, lines, err
}

// writeOutput writes Injection.Output's text (every document that did not fail, each followed by
// "---\n") document by document through one buffer: a multi-megabyte manifest is not first joined
// into one string, whose growing is a measurable share of inject's time (BENCHMARKS.md, §5).
func writeOutput(w io.Writer, docs []engine.Document) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	for _, d := range docs {
		if d.Error != nil {
			continue
		}
		if _, err := bw.WriteString(d.Output()); err != nil {
			return err
		}
		if _, err := bw.WriteString("---\n"); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// request reads the inputs and turns the flags into the engine's inputs.
func request(c *cli, files fileFlags, settings settingsFlags, steps stepFlags) (joined, []input.Step, engine.Settings, error) {
	if len(files.filenames) == 0 {
		return joined{}, nil, engine.Settings{}, usageError{c.T("cli.error.filename_required")}
	}
	s, err := settings.settings(c)
	if err != nil {
		return joined{}, nil, s, err
	}
	st, err := steps.steps()
	if err != nil {
		return joined{}, nil, s, err
	}
	inputs, err := readInputs(c, files.filenames, files.recursive)
	if err != nil {
		return joined{}, nil, s, err
	}
	return join(inputs), st, s, nil
}

// session is what every command that injects starts from: the inputs as one manifest (with the
// way back from a place in it to the file, joined's locate and place), the steps and settings
// the flags give, and the engine that runs them.
type session struct {
	joined
	steps    []input.Step
	settings engine.Settings
	eng      *engine.Engine
}

// start reads the flags and the inputs (request), then starts the engine: the one way a command
// sets up. Close stops the engine.
func start(c *cli, files fileFlags, settings settingsFlags, steps stepFlags) (*session, error) {
	return startWith(c, files, settings, steps, cliEngineOptions())
}

// startWith is start with an engine of those options.
func startWith(c *cli, files fileFlags, settings settingsFlags, steps stepFlags, opts engine.Options) (*session, error) {
	j, st, s, err := request(c, files, settings, steps)
	if err != nil {
		return nil, err
	}
	eng, err := engine.New(c.ctx, opts)
	if err != nil {
		return nil, err
	}
	return &session{joined: j, steps: st, settings: s, eng: eng}, nil
}

// Close stops the session's engine.
func (s *session) Close() { s.eng.Close() }

// printWarnings prints Istio's warnings as istioctl does: a blank line, then each one.
func printWarnings(c *cli, warnings []string) {
	if len(warnings) == 0 {
		return
	}
	fmt.Fprintln(c.stderr)
	for _, w := range warnings {
		fmt.Fprintln(c.stderr, w)
	}
}

// reportDocErrors prints the documents' errors, each placed in its file, and fails.
func reportDocErrors(c *cli, j joined, errs []*input.Error) error {
	if len(errs) == 0 {
		return nil
	}
	for _, e := range errs {
		fmt.Fprintln(c.stderr, "sidecarlab:", c.errText(j.locate(e)))
	}
	return errSilent
}
