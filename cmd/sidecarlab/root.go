package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	istiolog "istio.io/istio/pkg/log"

	"github.com/sidecarlab/sidecarlab/engine"
)

// cli is what every command runs with: the process's context, environment and streams, passed in
// so tests drive the commands exactly as main does. Each command is made by a
// `newXCmd(c *cli) *cobra.Command` in a file of its own.
type cli struct {
	ctx    context.Context
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// name is the command as its user types it: "sidecarlab", or "kubectl sidecarlab" when the
	// binary runs as a kubectl plugin. Help and examples say it.
	name string
}

// errSilent is returned when the command already said what went wrong on stderr.
var errSilent = errors.New("failed")

// usageError is a mistake in how the command was called (exit status 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// exitCode is the process's exit status for what run returned: 2 for a usage error, 1 for any
// other failure.
func exitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// run is the whole program as `sidecarlab`: main only wires it to the process.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	return runAs(ctx, "sidecarlab", args, getenv, stdin, stdout, stderr)
}

// runAs is run under the name its user typed (see commandName).
func runAs(ctx context.Context, name string, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	quietIstio()
	c := &cli{ctx: ctx, getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr, name: name}
	root := newRootCmd(c)
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// commandName is the command as its user typed it, from the program's argv[0]: installed as
// kubectl-sidecarlab (on the PATH), the binary is the kubectl plugin `kubectl sidecarlab`.
func commandName(argv0 string) string {
	base := strings.TrimSuffix(filepath.Base(argv0), ".exe")
	if plugin, ok := strings.CutPrefix(base, "kubectl-"); ok && plugin != "" {
		// kubectl maps "-" in a plugin's command to "_" in its file name.
		return "kubectl " + strings.ReplaceAll(plugin, "_", "-")
	}
	return "sidecarlab"
}

// newRootCmd is the sidecarlab command and every subcommand under it.
func newRootCmd(c *cli) *cobra.Command {
	root := &cobra.Command{
		Use:   "sidecarlab",
		Short: "Show what Istio's sidecar injection does to a workload",
		Long: `sidecarlab shows what Istio's sidecar injection does to a Kubernetes workload: the injected
manifest (byte for byte what istioctl kube-inject prints), the field-level diff of each pod
annotation, the pitfalls, a batch of workloads as one table, the annotation catalog — and serves
the same as a web playground. The injector is Istio's own, of the Istio version "version" prints.`,
		Example: examples(c,
			"# Inject a Deployment, as istioctl kube-inject does",
			"{} inject -f deployment.yaml",
			"",
			"# What each annotation changes, field by field",
			"{} diff -f deployment.yaml --annotate sidecar.istio.io/proxyCPU=200m",
			"",
			"# Every manifest of a directory tree as one table",
			"{} batch -f manifests/ -R"),
		// Errors are printed once, by main, and usage only when asked for: a failed injection
		// is not a reason to print the flags.
		SilenceErrors: true,
		SilenceUsage:  true,
		// cobra's own default, which SuggestionsFor does not apply by itself.
		SuggestionsMinimumDistance: 2,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.DisplayName())
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, " or ") + "?"
			}
			return usageError{msg + "\n" + seeHelp(cmd)}
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(c.stderr)
			_ = cmd.Help()
			return usageError{"no command"}
		},
	}
	if c.name != "sidecarlab" {
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: c.name}
	}
	root.SetIn(c.stdin)
	root.SetOut(c.stdout)
	root.SetErr(c.stderr)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		msg := err.Error()
		// A long flag with one dash, as Go's flag package took them ("-annotate"): pflag reads a
		// shorthand cluster and names only its first letter.
		if _, word, ok := strings.Cut(msg, "' in -"); ok && cmd.Flags().Lookup(word) != nil {
			msg += fmt.Sprintf("; did you mean --%s?", word)
		}
		return usageError{msg + "\n" + seeHelp(cmd)}
	})
	root.AddCommand(
		newInjectCmd(c),
		newDiffCmd(c),
		newBatchCmd(c),
		newCheckCmd(c),
		newAdmitCmd(c),
		newAnnotationsCmd(c),
		newVersionCmd(c),
		newServeCmd(c),
		newShareCmd(c),
		newWorkerCmd(c),
	)
	return root
}

// seeHelp points at a command's help, as kubectl does after a usage error.
func seeHelp(cmd *cobra.Command) string {
	return fmt.Sprintf("See '%s --help' for usage.", cmd.CommandPath())
}

// examples joins example lines into a command's Example, indented as cobra prints it, with "{}"
// standing for the command as its user types it (c.name).
func examples(c *cli, lines ...string) string {
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + strings.ReplaceAll(l, "{}", c.name)
		}
	}
	return strings.Join(lines, "\n")
}

// noArgs refuses positional arguments with a usage error (cobra.NoArgs's is a plain error).
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q\n%s", args[0], seeHelp(cmd))}
	}
	return nil
}

// outputFlag registers -o/--output with its allowed formats, the first being the default; the
// formats complete in the shell.
func outputFlag(cmd *cobra.Command, p *string, formats ...string) {
	cmd.Flags().StringVarP(p, "output", "o", formats[0], "output format: "+strings.Join(formats, ", "))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
}

// checkOutput is a usage error unless format is one of formats.
func checkOutput(format string, formats ...string) error {
	for _, f := range formats {
		if format == f {
			return nil
		}
	}
	return usageError{fmt.Sprintf("-o %q: want %s", format, orList(formats))}
}

// orList is "a", "a or b", "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
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

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
