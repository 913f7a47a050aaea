package explain

// iptablesFlags say what each istio-iptables flag does, by its long name (engine.Change.FlagName).
// The sentences follow Istio's own help texts (tools/istio-iptables/pkg/cmd/root.go in the pinned
// Istio); the annotation or setting that writes the flag comes from Istio's injection template
// (manifests/charts/istio-control/istio-discovery/files/injection-template.yaml).
var iptablesFlags = map[string]string{
	"envoy-port":                         "the Envoy port all TCP traffic is redirected to (meshConfig proxyListenPort)",
	"inbound-capture-port":               "the port all inbound TCP traffic is redirected to (meshConfig proxyInboundListenPort)",
	"inbound-tunnel-port":                "the Istio tunnel port for inbound TCP traffic",
	"proxy-uid":                          "the UID whose traffic is not redirected: the proxy's own",
	"proxy-gid":                          "the GID whose traffic is not redirected (same default as -u)",
	"istio-inbound-interception-mode":    "how inbound connections reach Envoy, REDIRECT or TPROXY (interceptionMode)",
	"istio-inbound-ports":                `inbound ports redirected to Envoy; "*" for all, empty for none (includeInboundPorts)`,
	"istio-local-exclude-ports":          `inbound ports not redirected to Envoy, when all ("*") are (excludeInboundPorts)`,
	"istio-exclude-interfaces":           "network interfaces whose traffic, in or out, is not captured (excludeInterfaces)",
	"istio-service-cidr":                 `outbound IP ranges redirected to Envoy; "*" for all, empty for none (includeOutboundIPRanges)`,
	"istio-service-exclude-cidr":         `outbound IP ranges not redirected, when all ("*") are (excludeOutboundIPRanges)`,
	"istio-outbound-ports":               "outbound ports explicitly redirected to Envoy (includeOutboundPorts)",
	"istio-local-outbound-ports-exclude": "outbound ports not redirected to Envoy (excludeOutboundPorts)",
	"kube-virt-interfaces":               "virtual interfaces whose inbound traffic is treated as outbound (kubevirtInterfaces)",
	"istio-inbound-tproxy-mark":          "the packet mark of TPROXY inbound interception",
	"istio-inbound-tproxy-route-table":   "the route table of TPROXY inbound interception",
	"dry-run":                            "print the rules without calling iptables",
	"log_output_level":                   "istio-iptables' log level (sidecar.istio.io/agentLogLevel)",
	"log_as_json":                        "istio-iptables logs as JSON (values.global.logAsJson)",
	"run-validation":                     "validate the rules Istio CNI installed (CNI: istio-validation)",
	"skip-rule-apply":                    "install no rules: Istio CNI did (CNI: istio-validation)",
	"force-apply":                        "apply the rules even if they seem in place (values.global.proxy_init.forceApplyIptables)",
	"native-nftables":                    "use nftables instead of iptables (values.global.nativeNftables)",
	"redirect-dns":                       "capture DNS traffic for the istio-agent",
	"capture-all-dns":                    "capture all DNS traffic on port 53, not only to the DNS server's IP",
	"dual-stack":                         "redirect IPv4 and IPv6 (dual stack)",
	"drop-invalid":                       "drop invalid packets in the rules",
}

// IptablesFlag says what an istio-iptables flag does, from its long name; empty when sidecarlab
// has no words for it.
func (w Words) IptablesFlag(name string) string { return iptablesFlags[name] }
