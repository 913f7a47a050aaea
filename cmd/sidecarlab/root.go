package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/wording"
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
	// lang words the messages meant for a person in the CLI's language (cliLang); nil is
	// English. In JSON output only the sentences (message, fix text, …) follow it: the data is
	// the same in every language. SARIF uses wording.English (its runs declare no language).
	lang *i18n.Localizer
}

// loc is the CLI's Localizer.
func (c *cli) loc() *i18n.Localizer {
	if c.lang == nil {
		return i18n.For(i18n.Default)
	}
	return c.lang
}

// T words a message of the CLI's catalog (cli.*) in the CLI's language.
func (c *cli) T(id string, kv ...any) string { return c.loc().T(id, kv...) }

// words words the engine's findings in the CLI's language.
func (c *cli) words() wording.Words { return wording.In(c.loc()) }

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
	c := &cli{ctx: ctx, getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr, name: name, lang: i18n.For(cliLang(args, getenv))}
	root := newRootCmd(c)
	root.SetArgs(args)
	return c.localize(root.ExecuteContext(ctx))
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
	var lang string
	root := &cobra.Command{
		Use:   "sidecarlab",
		Short: c.T("cli.root.short"),
		Long:  c.T("cli.root.long"),
		Example: examples(c,
			"# "+c.T("cli.root.example.e1"),
			"{} inject -f deployment.yaml",
			"",
			"# "+c.T("cli.root.example.e2"),
			"{} diff -f deployment.yaml --annotate sidecar.istio.io/proxyCPU=200m",
			"",
			"# "+c.T("cli.root.example.e3"),
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
			msg := c.T("cli.error.unknown_command", "Command", fmt.Sprintf("%q", args[0]), "Name", fmt.Sprintf("%q", cmd.DisplayName()))
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += c.T("cli.error.did_you_mean", "Suggestions", c.orList(s))
			}
			return usageError{msg + "\n" + c.seeHelp(cmd)}
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(c.stderr)
			_ = cmd.Help()
			return usageError{c.T("cli.error.no_command")}
		},
		// --lang was read ahead (cliLang); a value that is no language is refused here.
		PersistentPreRunE: func(*cobra.Command, []string) error { return checkLang(c, lang) },
	}
	langFlagRegister(c, root, &lang)
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
			msg += c.T("cli.error.did_you_mean", "Suggestions", "--"+word)
		}
		return usageError{msg + "\n" + c.seeHelp(cmd)}
	})
	root.AddCommand(
		newInjectCmd(c),
		newDiffCmd(c),
		newExplainCmd(c),
		newBatchCmd(c),
		newCheckCmd(c),
		newAdmitCmd(c),
		newAnnotationsCmd(c),
		newVersionCmd(c),
		newServeCmd(c),
		newShareCmd(c),
		newWorkerCmd(c),
	)
	localizeHelp(c, root)
	return root
}

// localizeHelp words cobra's own parts of every command's help in the CLI's language: the
// headings of its usage template (cobra's default, headings from the catalog) and the -h flag.
// cobra's help and completion commands keep cobra's English.
func localizeHelp(c *cli, root *cobra.Command) {
	headings := strings.NewReplacer(
		"Usage:", c.T("cli.help.usage"),
		"Aliases:", c.T("cli.help.aliases"),
		"Examples:", c.T("cli.help.examples"),
		"Available Commands:", c.T("cli.help.commands"),
		"Additional Commands:", c.T("cli.help.additional_commands"),
		"Global Flags:", c.T("cli.help.global_flags"),
		"Flags:", c.T("cli.help.flags"),
		"Additional help topics:", c.T("cli.help.topics"),
		`Use "{{.CommandPath}} [command] --help" for more information about a command.`, c.T("cli.help.more", "Command", "{{.CommandPath}}"),
	)
	root.SetUsageTemplate(headings.Replace(root.UsageTemplate()))
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		cmd.InitDefaultHelpFlag()
		cmd.Flags().Lookup("help").Usage = c.T("cli.help.flag", "Command", cmd.DisplayName())
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// seeHelp points at a command's help, as kubectl does after a usage error.
func (c *cli) seeHelp(cmd *cobra.Command) string {
	return c.T("cli.error.see_help", "Command", cmd.CommandPath())
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
func (c *cli) noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{c.T("cli.error.unexpected_argument", "Argument", fmt.Sprintf("%q", args[0])) + "\n" + c.seeHelp(cmd)}
	}
	return nil
}

// outputFlag registers -o/--output with its allowed formats, the first being the default; the
// formats complete in the shell.
func (c *cli) outputFlag(cmd *cobra.Command, p *string, formats ...string) {
	cmd.Flags().StringVarP(p, "output", "o", formats[0], c.T("cli.flag.output", "Formats", strings.Join(formats, ", ")))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
}

// checkOutput is a usage error unless format is one of formats.
func (c *cli) checkOutput(format string, formats ...string) error {
	for _, f := range formats {
		if format == f {
			return nil
		}
	}
	return usageError{c.T("cli.error.want", "Flag", "-o", "Value", fmt.Sprintf("%q", format), "Choices", c.orList(formats))}
}

// orList is "a", "a or b", "a, b or c" in the CLI's language.
func (c *cli) orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return c.T("cli.or", "List", strings.Join(s[:len(s)-1], c.T("cli.list_sep")), "Last", s[len(s)-1])
}

// cliEngineOptions are the engine's options for the commands a user runs on their own machine:
// every install option Istio accepts is accepted (their own templates, their own chart
// directory), since it runs with their own rights. serve is stricter.
func cliEngineOptions() engine.Options {
	return engine.Options{InstallPolicy: engine.TrustedInstalls(), Workers: runtime.GOMAXPROCS(0)}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
