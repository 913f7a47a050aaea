package wording

// iptablesFlags are the istio-iptables flags sidecarlab says the meaning of (wording.flag.<name>),
// by long name (diff.Change.FlagName).
// The sentences follow Istio's own help texts (tools/istio-iptables/pkg/cmd/root.go in the pinned
// Istio); the annotation or setting that writes the flag comes from Istio's injection template
// (manifests/charts/istio-control/istio-discovery/files/injection-template.yaml).
var iptablesFlags = map[string]bool{
	"envoy-port":                         true,
	"inbound-capture-port":               true,
	"inbound-tunnel-port":                true,
	"proxy-uid":                          true,
	"proxy-gid":                          true,
	"istio-inbound-interception-mode":    true,
	"istio-inbound-ports":                true,
	"istio-local-exclude-ports":          true,
	"istio-exclude-interfaces":           true,
	"istio-service-cidr":                 true,
	"istio-service-exclude-cidr":         true,
	"istio-outbound-ports":               true,
	"istio-local-outbound-ports-exclude": true,
	"kube-virt-interfaces":               true,
	"istio-inbound-tproxy-mark":          true,
	"istio-inbound-tproxy-route-table":   true,
	"dry-run":                            true,
	"log_output_level":                   true,
	"log_as_json":                        true,
	"run-validation":                     true,
	"skip-rule-apply":                    true,
	"force-apply":                        true,
	"native-nftables":                    true,
	"redirect-dns":                       true,
	"capture-all-dns":                    true,
	"dual-stack":                         true,
	"drop-invalid":                       true,
}

// IptablesFlag says what an istio-iptables flag does (wording.flag.<name>), from its long name;
// empty when sidecarlab has no words for it.
func (w Words) IptablesFlag(name string) string {
	if !iptablesFlags[name] {
		return ""
	}
	return w.loc().T("wording.flag." + name)
}
