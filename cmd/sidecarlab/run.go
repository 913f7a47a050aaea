package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	istiolog "istio.io/istio/pkg/log"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/explain"
	"github.com/sidecarlab/sidecarlab/sandbox"
)

// errSilent is returned when the command already said what went wrong on stderr.
var errSilent = errors.New("failed")

// usageError is a mistake in how the command was called (exit status 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func exitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) || errors.Is(err, flag.ErrHelp) {
		return 2
	}
	return 1
}

const usage = `sidecarlab shows what Istio's sidecar injection does to a workload.

Usage:
  sidecarlab inject -f FILE|- [--annotate KEY=VALUE]... [--set PATH=VALUE]... [--operator FILE]
                    [--native-sidecars auto|true|false] [--kubernetes-version 1.34] [-o yaml|json]
                    [--fail-on warning|error]
  sidecarlab diff   (same flags as inject) [--unified]
  sidecarlab batch  FILE... [--set PATH=VALUE]... [--operator FILE] [--native-sidecars …]
                    [--kubernetes-version …] [-o table|csv|markdown|json]
  sidecarlab annotations [-o table|json]
  sidecarlab version
  sidecarlab serve [--addr :8080]      (env SIDECARLAB_ADDR)
                   [--allow-custom-templates [--worker-cpu-seconds 10] [--worker-memory BYTES]]
`

// run is the whole program: main only wires it to the process.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	quietIstio()
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageError{"no command"}
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "inject":
		return runInject(ctx, rest, stdin, stdout, stderr)
	case "diff":
		return runDiff(ctx, rest, stdin, stdout, stderr)
	case "annotations":
		return runAnnotations(rest, stdout, stderr)
	case "version":
		return runVersion(rest, stdout, stderr)
	case "batch":
		return runBatch(ctx, rest, stdout, stderr)
	case "serve":
		return runServe(ctx, rest, getenv, stderr)
	case "worker":
		// Hidden: the isolated worker serve starts for untrusted templates (package sandbox).
		return sandbox.EngineWorker(ctx, rest, stdin)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return usageError{fmt.Sprintf("unknown command %q", cmd)}
	}
}

// cliEngineOptions are the engine's options for the commands a user runs on their own machine:
// every install option Istio accepts is accepted (their own templates, their own chart
// directory), since it runs with their own rights. serve is stricter.
func cliEngineOptions() engine.Options {
	return engine.Options{InstallPolicy: engine.TrustedInstalls()}
}

// quietIstio turns off the Istio library's own logging (its fake-cluster chatter and the
// injector's error lines, which the engine reports as results instead).
func quietIstio() {
	o := istiolog.DefaultOptions()
	o.SetDefaultOutputLevel(istiolog.OverrideScopeName, istiolog.NoneLevel)
	_ = istiolog.Configure(o)
}

// multiFlag collects a repeated string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// injectFlags are the inputs inject and diff share.
type injectFlags struct {
	file, operator, native, kubeVersion, output string
	annotate, set                               multiFlag
}

func (f *injectFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.file, "f", "", "manifest file, or - for standard input")
	fs.StringVar(&f.file, "filename", "", "same as -f")
	fs.Var(&f.annotate, "annotate", "add a pod annotation KEY=VALUE (or -KEY to remove one); repeat for several steps")
	fs.Var(&f.set, "set", "IstioOperator install option PATH=VALUE, e.g. values.global.proxy.holdApplicationUntilProxyStarts=true; repeatable")
	fs.StringVar(&f.operator, "operator", "", "IstioOperator YAML overlay file")
	fs.StringVar(&f.native, "native-sidecars", "auto", "auto (what kube-inject or the webhook decides), true or false (ENABLE_NATIVE_SIDECARS)")
	fs.StringVar(&f.kubeVersion, "kubernetes-version", "", "inject as the in-cluster webhook would on nodes of this Kubernetes version, e.g. 1.34")
	fs.StringVar(&f.output, "o", "yaml", "output format")
}

// request turns the flags into the engine's inputs.
func (f *injectFlags) request(stdin io.Reader) (manifest []byte, steps []engine.Step, s engine.Settings, err error) {
	switch f.file {
	case "":
		return nil, nil, s, usageError{"-f FILE (or -f - for standard input) is required"}
	case "-":
		manifest, err = io.ReadAll(stdin)
	default:
		manifest, err = os.ReadFile(f.file)
	}
	if err != nil {
		return nil, nil, s, err
	}
	for _, a := range f.annotate {
		st, err := engine.ParseStep(a)
		if err != nil {
			return nil, nil, s, err
		}
		steps = append(steps, st)
	}
	s.Install.Set = f.set
	if f.operator != "" {
		b, err := os.ReadFile(f.operator)
		if err != nil {
			return nil, nil, s, err
		}
		s.Install.Overlay = string(b)
	}
	switch f.native {
	case "true":
		s.Mode = engine.ModeNative
	case "false":
		s.Mode = engine.ModeClassic
	case "auto", "":
		s.Mode = engine.ModeKubeInject
		if f.kubeVersion != "" {
			s.Mode, s.KubernetesVersion = engine.ModeWebhook, f.kubeVersion
		}
	default:
		return nil, nil, s, usageError{fmt.Sprintf("--native-sidecars %q: want auto, true or false", f.native)}
	}
	if f.kubeVersion != "" && s.Mode != engine.ModeWebhook {
		return nil, nil, s, usageError{"--kubernetes-version applies only with --native-sidecars auto (the webhook's own detection)"}
	}
	return manifest, steps, s, nil
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}

func runInject(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var f injectFlags
	var failOn string
	fs := newFlagSet("inject", stderr)
	f.register(fs)
	fs.StringVar(&failOn, "fail-on", "", "exit non-zero when a pitfall of this severity or worse is found: warning or error")
	if err := parse(fs, args); err != nil {
		return err
	}
	if f.output != "yaml" && f.output != "json" {
		return usageError{fmt.Sprintf("-o %q: want yaml or json", f.output)}
	}
	if failOn != "" && failOn != string(engine.SeverityWarning) && failOn != string(engine.SeverityError) {
		return usageError{fmt.Sprintf("--fail-on %q: want warning or error", failOn)}
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
	r, err := eng.Inject(ctx, manifest, steps, s)
	if err != nil {
		return err
	}
	if f.output == "json" {
		out := struct {
			Documents []engine.Document `json:"documents"`
			Findings  []explain.Finding `json:"findings"`
		}{r.Documents, explain.Findings(r.Findings)}
		if err := writeJSON(stdout, out); err != nil {
			return err
		}
	} else if _, err := io.WriteString(stdout, r.Output()); err != nil {
		return err
	}
	// Warnings as istioctl prints them: a blank line, then each one.
	if w := r.Warnings(); len(w) > 0 {
		fmt.Fprintln(stderr)
		for _, s := range w {
			fmt.Fprintln(stderr, s)
		}
	}
	failed := false
	for _, f := range r.Findings {
		fmt.Fprintln(stderr, "pitfall:", explain.Line(f))
		if failOn != "" && f.Severity.Rank() >= engine.Severity(failOn).Rank() {
			failed = true
		}
	}
	if err := reportDocErrors(r.Errors(), stderr); err != nil {
		return err
	}
	if failed {
		fmt.Fprintf(stderr, "sidecarlab: pitfalls of severity %s or worse (--fail-on)\n", failOn)
		return errSilent
	}
	return nil
}

func reportDocErrors(errs []*engine.InputError, stderr io.Writer) error {
	if len(errs) == 0 {
		return nil
	}
	for _, e := range errs {
		fmt.Fprintln(stderr, "sidecarlab:", e)
	}
	return errSilent
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func runVersion(args []string, stdout, stderr io.Writer) error {
	var output string
	fs := newFlagSet("version", stderr)
	fs.StringVar(&output, "o", "text", "text or json")
	if err := parse(fs, args); err != nil {
		return err
	}
	v := engine.Version()
	if output == "json" {
		return writeJSON(stdout, v)
	}
	_, err := fmt.Fprintf(stdout, "Istio %s (istio.io/istio %s, commit %s)\n", v.Istio, v.Module, v.Commit)
	return err
}
