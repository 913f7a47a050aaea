package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/sidecarlab/sidecarlab/engine"
)

// fileFlags are where the manifests come from: -f/--filename (repeatable: files, directories, -
// for standard input) and -R/--recursive, as kubectl has them.
type fileFlags struct {
	filenames []string
	recursive bool
}

func (f *fileFlags) register(c *cli, cmd *cobra.Command) {
	cmd.Flags().StringSliceVarP(&f.filenames, "filename", "f", nil,
		c.T("cli.flag.filename"))
	cmd.Flags().BoolVarP(&f.recursive, "recursive", "R", false,
		c.T("cli.flag.recursive"))
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
}

// settingsFlags are the install options and the injection mode inject, diff and batch share.
type settingsFlags struct {
	operator, native, kubeVersion string
	set                           []string
}

func (f *settingsFlags) register(c *cli, cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.set, "set", "s", nil, c.T("cli.flag.set"))
	fl.StringVar(&f.operator, "operator", "", c.T("cli.flag.operator"))
	fl.StringVar(&f.native, "native-sidecars", "auto", c.T("cli.flag.native_sidecars"))
	fl.StringVar(&f.kubeVersion, "kubernetes-version", "", c.T("cli.flag.kubernetes_version"))
	_ = cmd.MarkFlagFilename("operator", "yaml", "yml")
	_ = cmd.RegisterFlagCompletionFunc("native-sidecars", cobra.FixedCompletions([]string{"auto", "true", "false"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("kubernetes-version", cobra.NoFileCompletions)
}

// settings turns the flags into the engine's settings.
func (f *settingsFlags) settings(c *cli) (engine.Settings, error) {
	var s engine.Settings
	s.Install.Set = f.set
	if f.operator != "" {
		b, err := os.ReadFile(f.operator)
		if err != nil {
			return s, err
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
		return s, usageError{c.T("cli.error.want", "Flag", "--native-sidecars", "Value", fmt.Sprintf("%q", f.native), "Choices", c.orList([]string{"auto", "true", "false"}))}
	}
	if f.kubeVersion != "" && s.Mode != engine.ModeWebhook {
		return s, usageError{c.T("cli.error.kubernetes_version_auto")}
	}
	return s, nil
}

// stepFlags are the annotation steps inject and diff apply.
type stepFlags struct{ annotate []string }

func (f *stepFlags) register(c *cli, cmd *cobra.Command) {
	// An array, not a slice: values carry commas (port lists, CIDRs).
	cmd.Flags().StringArrayVar(&f.annotate, "annotate", nil, c.T("cli.flag.annotate"))
	_ = cmd.RegisterFlagCompletionFunc("annotate", cobra.NoFileCompletions)
}

func (f *stepFlags) steps() ([]engine.Step, error) {
	var steps []engine.Step
	for _, a := range f.annotate {
		st, err := engine.ParseStep(a)
		if err != nil {
			return nil, err
		}
		steps = append(steps, st)
	}
	return steps, nil
}
