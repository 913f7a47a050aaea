package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/engine"
)

func newAdmitCmd(c *cli) *cobra.Command {
	var (
		files     fileFlags
		settings  settingsFlags
		steps     stepFlags
		namespace string
		nsLabels  string
		output    string
	)
	cmd := &cobra.Command{
		Use:   "admit -f FILENAME --namespace NAME [--namespace-labels K=V,...]",
		Short: c.T("cli.admit.short"),
		Long: c.T("cli.admit.long", "Version", engine.DefaultKubernetesVersion,
			"Kubernetes", admission.CheckedKubernetes, "Istio", engine.Version().Istio),
		Example: examples(c,
			"# "+c.T("cli.admit.example.e1"),
			"{} admit -f deployment.yaml --namespace shop",
			"",
			"# "+c.T("cli.admit.example.e2"),
			"{} admit -f deployment.yaml --namespace shop --namespace-labels istio-injection=enabled,pod-security.kubernetes.io/enforce=baseline",
			"",
			"# "+c.T("cli.admit.example.e3"),
			"{} admit -f deployment.yaml --namespace shop --namespace-labels istio-injection=enabled,pod-security.kubernetes.io/enforce=baseline --set components.cni.enabled=true -o json"),
		Args: c.noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.checkOutput(output, "text", "json"); err != nil {
				return err
			}
			set, err := labels.ConvertSelectorToLabelsMap(nsLabels)
			if err != nil {
				return usageError{c.T("cli.error.namespace_labels", "Value", fmt.Sprintf("%q", nsLabels), "Reason", err.Error())}
			}
			given := cmd.Flags().Changed("namespace")
			if settings.cluster.given() {
				// The namespace's labels are the cluster's: read them for the namespace named.
				if !given {
					return usageError{c.T("cli.error.cluster_namespace")}
				}
				if nsLabels != "" {
					return usageError{c.T("cli.error.cluster_and", "Flag", "--namespace-labels")}
				}
				settings.namespace = namespace
			}
			j, err := start(c, files, settings, steps)
			if err != nil {
				return err
			}
			defer j.Close()
			if !given {
				// As kubectl: the documents' own namespaces, the default one for the others; a
				// namespace given must be every document's that names one.
				namespace = ""
			}
			if !settings.cluster.given() {
				j.settings.Namespace = engine.Namespace{Name: namespace, Labels: set}
			}
			return admitRun(c, j, output, given)
		},
	}
	files.register(c, cmd)
	settings.register(c, cmd)
	// The Cluster view always asks the webhook at the chosen Kubernetes version.
	_ = cmd.Flags().MarkHidden("native-sidecars")
	steps.register(c, cmd)
	cmd.Flags().StringVarP(&namespace, "namespace", "n", admission.DefaultNamespace, c.T("cli.flag.admit.namespace"))
	cmd.Flags().StringVar(&nsLabels, "namespace-labels", "", c.T("cli.flag.admit.namespace_labels"))
	c.outputFlag(cmd, &output, "text", "json")
	return cmd
}

func admitRun(c *cli, j *session, output string, namespaceGiven bool) error {
	adm := admission.New(j.eng)
	adm.NamespaceGiven = namespaceGiven
	defer adm.Close()
	rs, err := adm.Admit(c.ctx, j.manifest, j.steps, j.settings)
	if err != nil {
		return j.locate(err)
	}
	// In JSON too the sentences (injectReasons, trace texts) are in the CLI's language; the data
	// is the same in every language.
	words := c.words().Admissions(rs)
	if output == "json" {
		if err := writeJSON(c.stdout, words); err != nil {
			return err
		}
	} else {
		for _, a := range words {
			fmt.Fprint(c.stdout, c.T("cli.admit.workload", "Doc", a.Doc, "Kind", a.Kind, "Name", a.Name))
			if a.Error != "" {
				fmt.Fprintf(c.stdout, ": %s\n\n", a.Error)
				continue
			}
			fmt.Fprintln(c.stdout, c.T("cli.admit.pod", "Pod", a.Pod, "Namespace", a.Namespace))
			verdict := c.T("cli.admit.not_injected")
			if a.Injected {
				verdict = c.T("cli.admit.injected")
			}
			admitted := c.T("cli.admit.admitted")
			if !a.Admitted {
				admitted = c.T("cli.admit.rejected")
			}
			fmt.Fprintf(c.stdout, "  %s%s%s\n", verdict, c.T("cli.list_sep"), admitted)
			for _, t := range a.Trace {
				fmt.Fprintf(c.stdout, "  - %s\n", t.Text)
			}
			if a.Ambient != nil {
				fmt.Fprintf(c.stdout, "  %s\n", a.Ambient.Text)
				for _, f := range a.Ambient.RunTime {
					fmt.Fprintf(c.stdout, "    %s\n", f)
				}
			}
			for _, w := range a.Warnings {
				fmt.Fprintln(c.stdout, "  "+c.T("cli.admit.warning", "Warning", w))
			}
			fmt.Fprintln(c.stdout)
		}
	}
	var rejected []string
	for _, a := range words {
		// As kubectl create: a Pod the cluster rejects, or a document kubectl itself refuses,
		// fails the command.
		if a.Refused || (a.Error == "" && !a.Admitted) {
			rejected = append(rejected, c.T("cli.admit.rejected_doc", "Doc", a.Doc, "Kind", a.Kind, "Name", a.Name))
		}
	}
	if len(rejected) > 0 {
		fmt.Fprintln(c.stderr, "sidecarlab:", c.T("cli.admit.rejected_list", "Workloads", strings.Join(rejected, c.T("cli.list_sep"))))
		return errSilent
	}
	return nil
}
