package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/explain"
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
		Short: "Say whether each workload's Pod would be injected and admitted, and why",
		Long: `Follow the Pod each workload's controller creates through the cluster's admission path, offline,
with the code the cluster runs: the installation's MutatingWebhookConfigurations matched against
the namespace's and the Pod's labels (apimachinery's selectors, as the API server does), Istio's
webhook itself (its JSON patch applied), and Pod Security Admission with the namespace's
pod-security.kubernetes.io labels, at the chosen Kubernetes version (default ` + engine.DefaultKubernetesVersion + `).

Prints, per workload, injected or not and admitted or rejected, with the rules that decided in the
order the cluster applies them. Exits 1 when a workload would be rejected.`,
		Example: examples(c,
			"# Why was my pod not injected? (a namespace without the label)",
			"{} admit -f deployment.yaml --namespace shop",
			"",
			"# Injected, and admitted under the baseline Pod Security level?",
			"{} admit -f deployment.yaml --namespace shop --namespace-labels istio-injection=enabled,pod-security.kubernetes.io/enforce=baseline",
			"",
			"# The same with Istio CNI, which replaces istio-init",
			"{} admit -f deployment.yaml --namespace shop --namespace-labels istio-injection=enabled,pod-security.kubernetes.io/enforce=baseline --set components.cni.enabled=true -o json"),
		Args: c.noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.checkOutput(output, "text", "json"); err != nil {
				return err
			}
			set, err := labels.ConvertSelectorToLabelsMap(nsLabels)
			if err != nil {
				return usageError{fmt.Sprintf("--namespace-labels %q: want KEY=VALUE,… (%v)", nsLabels, err)}
			}
			j, err := start(c, files, settings, steps)
			if err != nil {
				return err
			}
			defer j.Close()
			j.settings.Namespace = engine.Namespace{Name: namespace, Labels: set}
			return admitRun(c, j, output)
		},
	}
	files.register(cmd)
	settings.register(cmd)
	// The Cluster view always asks the webhook at the chosen Kubernetes version.
	_ = cmd.Flags().MarkHidden("native-sidecars")
	steps.register(cmd)
	cmd.Flags().StringVarP(&namespace, "namespace", "n", admission.DefaultNamespace, "the namespace the Pods are created in (a workload that names its own namespace keeps it)")
	cmd.Flags().StringVar(&nsLabels, "namespace-labels", "", "the namespace's labels, KEY=VALUE,… (istio-injection=enabled, istio.io/rev=…, pod-security.kubernetes.io/enforce=…)")
	outputFlag(cmd, &output, "text", "json")
	return cmd
}

func admitRun(c *cli, j *session, output string) error {
	adm := admission.New(j.eng)
	defer adm.Close()
	rs, err := adm.Admit(c.ctx, j.manifest, j.steps, j.settings)
	if err != nil {
		return j.locate(err)
	}
	words := explain.English.Admissions(rs)
	if output == "json" {
		if err := writeJSON(c.stdout, words); err != nil {
			return err
		}
	} else {
		for _, a := range words {
			fmt.Fprintf(c.stdout, "document %d: %s/%s", a.Doc, a.Kind, a.Name)
			if a.Error != "" {
				fmt.Fprintf(c.stdout, ": %s\n\n", a.Error)
				continue
			}
			fmt.Fprintf(c.stdout, " → Pod %s in namespace %s\n", a.Pod, a.Namespace)
			verdict := "NOT INJECTED"
			if a.Injected {
				verdict = "INJECTED"
			}
			admitted := "ADMITTED"
			if !a.Admitted {
				admitted = "REJECTED"
			}
			fmt.Fprintf(c.stdout, "  %s, %s\n", verdict, admitted)
			for _, t := range a.Trace {
				fmt.Fprintf(c.stdout, "  - %s\n", t.Text)
			}
			for _, w := range a.Warnings {
				fmt.Fprintf(c.stdout, "  warning: %s\n", w)
			}
			fmt.Fprintln(c.stdout)
		}
	}
	var rejected []string
	for _, a := range words {
		if a.Error == "" && !a.Admitted {
			rejected = append(rejected, fmt.Sprintf("document %d (%s/%s)", a.Doc, a.Kind, a.Name))
		}
	}
	if len(rejected) > 0 {
		fmt.Fprintf(c.stderr, "sidecarlab: rejected: %s\n", strings.Join(rejected, ", "))
		return errSilent
	}
	return nil
}
