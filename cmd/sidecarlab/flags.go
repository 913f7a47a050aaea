package main

import (
	"fmt"
	"os"

	"github.com/sidecarlab/sidecarlab/engine/input"

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
// Besides sidecarlab's --set and --operator, a mesh's own configuration: --mesh-from (its
// ConfigMaps as kubectl prints them) or istioctl kube-inject's own three files, and --revision.
type settingsFlags struct {
	operator, native, kubeVersion string
	set                           []string
	meshFrom                      string
	injectConfig, meshConfig      string
	values, revision              string
	cluster                       clusterFlags
	// namespace is the namespace whose mesh a cluster is read for (admit's -n); "" reads the
	// revision that --revision names, or that istio-injection=enabled selects.
	namespace string
}

func (f *settingsFlags) register(c *cli, cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.set, "set", "s", nil, c.T("cli.flag.set"))
	fl.StringVar(&f.operator, "operator", "", c.T("cli.flag.operator"))
	fl.StringVar(&f.native, "native-sidecars", "auto", c.T("cli.flag.native_sidecars"))
	fl.StringVar(&f.kubeVersion, "kubernetes-version", "", c.T("cli.flag.kubernetes_version"))
	fl.StringVar(&f.meshFrom, "mesh-from", "", c.T("cli.flag.mesh_from"))
	// istioctl kube-inject's names and meanings, so that its command lines work as they are.
	fl.StringVar(&f.injectConfig, "injectConfigFile", "", c.T("cli.flag.inject_config_file"))
	fl.StringVar(&f.meshConfig, "meshConfigFile", "", c.T("cli.flag.mesh_config_file"))
	fl.StringVar(&f.values, "valuesFile", "", c.T("cli.flag.values_file"))
	fl.StringVarP(&f.revision, "revision", "r", "", c.T("cli.flag.revision"))
	f.cluster.register(c, cmd)
	_ = cmd.MarkFlagFilename("operator", "yaml", "yml")
	_ = cmd.MarkFlagFilename("mesh-from", "yaml", "yml", "json")
	_ = cmd.MarkFlagFilename("injectConfigFile")
	_ = cmd.MarkFlagFilename("meshConfigFile", "yaml", "yml")
	_ = cmd.MarkFlagFilename("valuesFile", "json", "yaml", "yml")
	_ = cmd.RegisterFlagCompletionFunc("revision", cobra.NoFileCompletions)
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
	if err := f.ownMesh(c, &s); err != nil {
		return s, err
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

func (f *stepFlags) steps() ([]input.Step, error) {
	var steps []input.Step
	for _, a := range f.annotate {
		st, err := input.ParseStep(a)
		if err != nil {
			return nil, err
		}
		steps = append(steps, st)
	}
	return steps, nil
}
