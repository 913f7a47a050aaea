package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

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

// ownMesh reads the mesh's own configuration the flags name into the install options: the
// ConfigMaps of --mesh-from (and their revision, unless --revision names one), or each of
// istioctl's three files.
func (f *settingsFlags) ownMesh(c *cli, s *engine.Settings) error {
	o := &s.Install
	o.Revision = f.revision
	if f.cluster.given() {
		for _, fl := range []struct{ name, value string }{{"--mesh-from", f.meshFrom}, {"--injectConfigFile", f.injectConfig},
			{"--meshConfigFile", f.meshConfig}, {"--valuesFile", f.values}, {"--operator", f.operator}} {
			if fl.value != "" {
				return usageError{c.T("cli.error.cluster_and", "Flag", fl.name)}
			}
		}
		if len(f.set) > 0 {
			return usageError{c.T("cli.error.cluster_and", "Flag", "--set")}
		}
		m, err := f.cluster.read(c, f.namespace, f.revision)
		if err != nil {
			return err
		}
		o.Mesh, o.Revision = m.Own, m.Revision
		if f.namespace != "" {
			s.Namespace = engine.Namespace{Name: f.namespace, Labels: m.NamespaceLabels}
			if f.kubeVersion == "" {
				s.KubernetesVersion = m.KubernetesVersion
			}
		}
		return nil
	}
	if f.meshFrom != "" {
		for _, fl := range []struct{ name, value string }{{"--injectConfigFile", f.injectConfig}, {"--meshConfigFile", f.meshConfig}, {"--valuesFile", f.values}} {
			if fl.value != "" {
				return usageError{c.T("cli.error.mesh_from_and", "Flag", fl.name)}
			}
		}
		b, err := os.ReadFile(f.meshFrom)
		if err != nil {
			return err
		}
		read, err := engine.ParseMeshConfigMaps(b)
		var ie *engine.InputError
		if errors.As(err, &ie) {
			return &fileError{file: f.meshFrom, err: ie}
		}
		if err != nil {
			return err
		}
		o.Mesh = read.Mesh
		if o.Revision == "" {
			o.Revision = read.Revision
		}
		if read.LabelRevision != "" {
			fmt.Fprintln(c.stderr, "sidecarlab:", c.T("cli.mesh_label_revision", "Revision", engine.RevisionName(read.Revision), "Label", read.LabelRevision))
		}
		if !read.Mesh.SameIstio() {
			fmt.Fprintln(c.stderr, "sidecarlab:", c.T("cli.mesh_other_istio", "Istio", read.Mesh.Istio, "Embedded", engine.Version().Istio))
		}
		return nil
	}
	// istioctl kube-inject reads the files it is not given from the cluster (the injector's
	// webhook or ConfigMap, the istio ConfigMap); offline it fails. Filling them with the embedded
	// Istio's defaults would inject what no cluster of the user's does (its test image, no CNI),
	// so a part of the three is refused, unless --set or --operator render the rest on purpose.
	parts := []struct {
		flag, file string
		into       *string
	}{{"--injectConfigFile", f.injectConfig, &o.Mesh.InjectorConfig}, {"--valuesFile", f.values, &o.Mesh.Values}, {"--meshConfigFile", f.meshConfig, &o.Mesh.MeshConfig}}
	var given, missing []string
	for _, part := range parts {
		if part.file == "" {
			missing = append(missing, part.flag)
		} else {
			given = append(given, part.flag)
		}
	}
	if len(given) > 0 && len(missing) > 0 && len(f.set) == 0 && f.operator == "" {
		return usageError{c.T("cli.error.istioctl_files", "Given", strings.Join(given, c.T("cli.list_sep")), "Missing", strings.Join(missing, c.T("cli.list_sep")))}
	}
	for _, part := range parts {
		if part.file == "" {
			continue
		}
		b, err := os.ReadFile(part.file)
		if err != nil {
			return err
		}
		*part.into = string(b)
	}
	return nil
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
