package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// TestFlagsAnywhere: flags after arguments are flags, as kubectl and istioctl read them
// (`batch a.yaml b.yaml -o json` once failed with "open -o").
func TestFlagsAnywhere(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.yaml": testkit.Deployment, "b.yaml": classicJob})
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	before, _, err := runCLI(t, "", "batch", "-o", "json", a, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"batch", a, b, "-o", "json"},
		{"batch", a, "--output=json", b},
		{"batch", "-f", a, b, "-o", "json"},
	} {
		after, stderr, err := runCLI(t, "", args...)
		if err != nil || after != before {
			t.Errorf("%v: %v %s\n%s", args, err, stderr, after)
		}
	}
	var rows []engine.BatchRow
	if err := json.Unmarshal([]byte(before), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	// inject: the flags in any order give the same output.
	one, _, err1 := runCLI(t, testkit.Deployment, "inject", "-f", "-", "--annotate", "sidecar.istio.io/proxyCPU=321m", "-o", "json")
	two, _, err2 := runCLI(t, testkit.Deployment, "inject", "-o", "json", "--annotate", "sidecar.istio.io/proxyCPU=321m", "--filename=-")
	if err1 != nil || err2 != nil || one != two || !strings.Contains(one, "321m") {
		t.Fatalf("inject with flags reordered: %v %v", err1, err2)
	}
}

// TestUsageErrors: mistakes in how a command is called exit 2 and say what was wrong.
func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"inject", "-f", "-", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"batch", "-Z"}, "unknown shorthand flag: 'Z' in -Z\n"},
		{[]string{"inject", "-f", "-", "-annotate", "a=b"}, "unknown shorthand flag: 'a' in -annotate; did you mean --annotate?"},
		{[]string{"serve", "-addr", ":0"}, "unknown shorthand flag: 'a' in -addr; did you mean --addr?"},
		{[]string{"inject", "-f", "-", "-annotatex"}, "unknown shorthand flag: 'a' in -annotatex\n"},
		{[]string{"serve", "--max-body", "lots"}, `invalid argument "lots" for "--max-body"`},
		{[]string{"inject", "-f"}, "flag needs an argument"},
		{[]string{"inject"}, "-f FILENAME (or -f - for standard input) is required"},
		{[]string{"inject", "-f", "-", "extra"}, `unexpected argument "extra"`},
		{[]string{"inject", "-f", "-", "-o", "xml"}, `-o "xml": want yaml or json`},
		{[]string{"batch", "-f", "-", "-o", "xml"}, `-o "xml": want table, csv, markdown or json`},
		{[]string{"annotations", "-o", "yaml"}, `-o "yaml": want table or json`},
		{[]string{"inject", "-f", "-", "--partial", "-o", "json"}, "--partial prints what istioctl prints: YAML, not -o json"},
		{[]string{"injct"}, `unknown command "injct" for "sidecarlab"; did you mean inject?`},
		{[]string{}, "no command"},
	}
	for _, c := range cases {
		_, stderr, err := runCLI(t, testkit.Deployment, c.args...)
		if exitCodeOf(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, %v; want 2 and %q (stderr %s)", c.args, exitCodeOf(err), err, c.want, stderr)
		}
	}
	// A failure that is not a usage error exits 1.
	if _, _, err := runCLI(t, "", "inject", "-f", filepath.Join(t.TempDir(), "missing.yaml")); exitCodeOf(err) != 1 {
		t.Errorf("a missing file: %v", err)
	}
}

// TestHelpOnEveryCommand: -h and --help on every command (those added later too) print its help
// with an example, on stdout, and exit 0.
func TestHelpOnEveryCommand(t *testing.T) {
	root := newRootCmd(&cli{ctx: t.Context(), getenv: func(string) string { return "" }, stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, name: "sidecarlab"})
	root.InitDefaultCompletionCmd() // as Execute does
	cmds := [][]string{{}}
	for _, sub := range root.Commands() {
		if !sub.Hidden && sub.Name() != "help" {
			cmds = append(cmds, []string{sub.Name()})
			if sub.Name() == "completion" {
				continue // cobra's own; its shells' help says how to install each
			}
			if sub.Example == "" {
				t.Errorf("%s has no example", sub.Name())
			}
		}
	}
	if len(cmds) < 8 {
		t.Fatalf("only %d commands", len(cmds))
	}
	for _, cmd := range cmds {
		for _, h := range []string{"-h", "--help"} {
			out, stderr, err := runCLI(t, "", append(cmd, h)...)
			if err != nil || stderr != "" {
				t.Errorf("%v %s: %v, stderr %q", cmd, h, err, stderr)
			}
			if !strings.Contains(out, "Usage:\n  sidecarlab "+strings.Join(cmd, " ")) {
				t.Errorf("%v %s: no usage line:\n%s", cmd, h, out)
			}
			if len(cmd) > 0 && cmd[0] == "completion" {
				continue
			}
			if !strings.Contains(out, "Examples:\n  ") {
				t.Errorf("%v %s: no examples:\n%s", cmd, h, out)
			}
		}
	}
}

// TestCompletion: completion prints a script for each shell, and the completions it asks for at
// run time are the commands' own: subcommands, and -o's formats.
func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{
		"bash": "__start_sidecarlab",
		"zsh":  "#compdef sidecarlab",
		"fish": "complete -c sidecarlab",
	} {
		out, _, err := runCLI(t, "", "completion", shell)
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("completion %s: %v; no %q in\n%.300s", shell, err, want, out)
		}
	}
	out, _, err := runCLI(t, "", cobra.ShellCompRequestCmd, "in")
	if err != nil || !strings.Contains(out, "inject\t") {
		t.Errorf("completing \"in\": %v\n%s", err, out)
	}
	out, _, err = runCLI(t, "", cobra.ShellCompRequestCmd, "batch", "-o", "")
	if err != nil || !strings.Contains(out, "markdown") || strings.Contains(out, "yaml") {
		t.Errorf("completing batch -o: %v\n%s", err, out)
	}
}

func TestCommandName(t *testing.T) {
	for argv0, want := range map[string]string{
		"sidecarlab":                            "sidecarlab",
		"/usr/local/bin/sidecarlab":             "sidecarlab",
		"./bin/sidecarlab-linux-amd64":          "sidecarlab",
		"/home/me/.krew/bin/kubectl-sidecarlab": "kubectl sidecarlab",
		"/opt/kubectl-sidecarlab.exe":           "kubectl sidecarlab",
		"kubectl-side_car_lab":                  "kubectl side-car-lab",
		"kubectl-":                              "sidecarlab",
	} {
		if got := commandName(argv0); got != want {
			t.Errorf("commandName(%q) = %q, want %q", argv0, got, want)
		}
	}
}

// TestKubectlPlugin: the binary installed as kubectl-sidecarlab is `kubectl sidecarlab`: the same
// output, and help and errors that name it as kubectl's users type it.
func TestKubectlPlugin(t *testing.T) {
	dir := t.TempDir()
	bin, err := testkit.Binary(dir)
	if err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(dir, "kubectl-sidecarlab")
	if err := os.Symlink(bin, plugin); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "x.yaml")
	if err := os.WriteFile(manifest, []byte(testkit.Deployment), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := func(name string, args ...string) (string, string, int) {
		cmd := exec.Command(name, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	want, _, code := exe(bin, "inject", "-f", manifest)
	got, stderr, code2 := exe(plugin, "inject", "-f", manifest)
	if code != 0 || code2 != 0 || got != want || !strings.Contains(got, "name: istio-proxy") {
		t.Fatalf("kubectl-sidecarlab inject (exit %d, %s) differs from sidecarlab inject (exit %d):\n%s", code2, stderr, code, diff.Unified(want, got))
	}
	help, _, code := exe(plugin, "inject", "-h")
	if code != 0 || !strings.Contains(help, "Usage:\n  kubectl sidecarlab inject -f FILENAME") || !strings.Contains(help, "  kubectl sidecarlab inject -f deployment.yaml") {
		t.Errorf("kubectl-sidecarlab inject -h (exit %d):\n%s", code, help)
	}
	if help, _, _ := exe(bin, "inject", "-h"); strings.Contains(help, "kubectl sidecarlab") {
		t.Errorf("sidecarlab inject -h speaks of the plugin:\n%s", help)
	}
	_, stderr, code = exe(plugin, "inject", "--bogus")
	if code != 2 || !strings.Contains(stderr, "See 'kubectl sidecarlab inject --help'") {
		t.Errorf("kubectl-sidecarlab inject --bogus: exit %d, %s", code, stderr)
	}
}
