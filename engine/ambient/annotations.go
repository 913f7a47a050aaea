package ambient

import (
	"strconv"

	"istio.io/api/annotation"
)

// The reasons of the table's rows.
const (
	// Honoured.
	reasonNodeAgent  Reason = "node-agent"  // the CNI node agent reads it on the pod
	reasonEnrolled   Reason = "enrolled"    // the node agent writes it, istiod reads it
	reasonHasSidecar Reason = "has-sidecar" // the node agent keeps a pod with a sidecar out
	reasonAnalysis   Reason = "analysis"    // istioctl analyze reads it on any resource

	// Ignored.
	reasonInjector         Reason = "injector"          // only the sidecar injector reads it
	reasonCaptureMode      Reason = "capture-mode"      // the sidecar's REDIRECT or TPROXY
	reasonSidecarCapture   Reason = "sidecar-capture"   // an exception to the sidecar's capture
	reasonSidecarReadiness Reason = "sidecar-readiness" // istio-proxy's readiness probe
	reasonSidecarOrder     Reason = "sidecar-order"     // how istio-proxy starts beside the app
	reasonProbes           Reason = "probes"            // the kubelet's probes pass ztunnel
	reasonUnread           Reason = "unread"            // nothing in this Istio reads it
	reasonGatewayOnly      Reason = "gateway-only"      // read on Gateway objects only

	// Elsewhere.
	reasonProxyMoved Reason = "proxy-moved" // the pod has no proxy; those serving it are set elsewhere
	reasonRevision   Reason = "revision"    // the node's ztunnel has the revision
	reasonEnablement Reason = "enablement"  // a pod joins or leaves ambient by a label
	reasonRenamed    Reason = "renamed"     // replaced by an annotation ambient reads
)

// checkedAt is the istio.io/istio commit (go.mod's pin) the table was checked against. Links
// into Istio's code point into it, so that their lines stay where they were read; a test holds
// it to the pinned module, so an upgrade of Istio asks for the table to be checked again.
const checkedAt = "eed52ebb66ad"

// code links a line of Istio's code at checkedAt; shows is text on that line.
func code(path string, line int, shows string) Source {
	return Source{URL: "https://github.com/istio/istio/blob/" + checkedAt + "/" + path + "#L" + strconv.Itoa(line), shows: shows}
}

// link is a source outside Istio's code: its docs, or a maintainer's word in its issues.
func link(url string) Source { return Source{URL: url} }

// Sources used by several rows.
var (
	// The node agent reads these three pod annotations, and no other, for an ambient pod.
	nodeAgentOverrides = code("cni/pkg/nodeagent/net.go", 27, "func getPodLevelTrafficOverrides")
	// For an ambient pod the CNI plugin runs its ambient branch only: the sidecar's
	// redirection, which reads the traffic annotations, is never reached.
	pluginAmbientOnly = code("cni/pkg/plugin/plugin.go", 242, "For ambient pods, this is all the logic we need to run")
	// A maintainer on istio/istio#49829: the seven traffic capture annotations (ports, address
	// ranges, excludeInterfaces) "do not work" in ambient.
	trafficDoNotWork = link("https://github.com/istio/istio/issues/49829#issuecomment-2443650570")
	// A waypoint's Gateway annotations (its spec.infrastructure.annotations, when it has them)
	// are written onto the waypoint's pod, whose pilot-agent reads its own pod's annotations.
	waypointPodAnnotations = code(waypointTemplate, 52, "(omit .InfrastructureAnnotations")
	waypointResources      = code(waypointTemplate, 217, ".Values.global.waypoint.resources")
	waypointParametersRef  = code("pilot/pkg/config/kube/gatewaycommon/deploymentcontroller.go", 621, "templateOverlays = append(templateOverlays, cm.Data)")
	ztunnelResources       = code("manifests/charts/ztunnel/values.yaml", 58, "resources:")
	ztunnelLogLevel        = code("manifests/charts/ztunnel/values.yaml", 122, "logLevel: info")
)

// Files of Istio's code that several rows cite.
const (
	injectionTemplate = "manifests/charts/istio-control/istio-discovery/files/injection-template.yaml"
	waypointTemplate  = "manifests/charts/istio-control/istio-discovery/files/waypoint.yaml"
	sidecarRedirect   = "cni/pkg/plugin/sidecar_redirect.go"
	bootstrapConfig   = "pkg/bootstrap/config.go"
)

// table is what ambient does with each pod annotation of Istio's catalog, sorted by name.
// TestTable holds it to the catalog and to the code its links cite.
var table = []Row{
	{annotation.AmbientBypassInboundCapture.Name, Honoured, reasonNodeAgent, nil, []Source{
		code("cni/pkg/nodeagent/net.go", 33, "annotation.AmbientBypassInboundCapture.Name")}},
	{annotation.AmbientDnsCapture.Name, Honoured, reasonNodeAgent, nil, []Source{
		code("cni/pkg/nodeagent/net.go", 39, "annotation.AmbientDnsCapture.Name")}},
	{annotation.AmbientRedirection.Name, Honoured, reasonEnrolled, nil, []Source{
		code("cni/pkg/util/podutil.go", 72, "annotation.AmbientRedirection.Name"),
		code("pilot/pkg/serviceregistry/ambient/workloads.go", 1202, "annotation.AmbientRedirection.Name")}},
	{annotation.GalleyAnalyzeSuppress.Name, Honoured, reasonAnalysis, nil, []Source{
		code("pkg/config/analysis/local/istiod_analyze.go", 565, "annotation.GalleyAnalyzeSuppress.Name")}},
	{annotation.GatewayControllerVersion.Name, Ignored, reasonGatewayOnly, nil, []Source{
		code("pilot/pkg/config/kube/gatewaycommon/deploymentcontroller.go", 544, `ControllerVersionAnnotation = "gateway.istio.io/controller-version"`)}},
	{annotation.InjectTemplates.Name, Ignored, reasonInjector, nil, []Source{
		code("pkg/kube/inject/inject.go", 554, "annotation.InjectTemplates.Name")}},
	{annotation.IoIstioRerouteVirtualInterfaces.Name, Honoured, reasonNodeAgent, nil, []Source{
		code("cni/pkg/nodeagent/net.go", 47, "annotation.IoIstioRerouteVirtualInterfaces.Name")}},
	{annotation.IoIstioRev.Name, Elsewhere, reasonRevision, []Place{PlaceZtunnel}, []Source{
		code(injectionTemplate, 41, "istio.io/rev: {{ .Revision"),
		code("manifests/charts/ztunnel/values.yaml", 106, `revision: ""`)}},
	{annotation.PrometheusMergeMetrics.Name, Ignored, reasonInjector, nil, []Source{
		code("pkg/kube/inject/webhook.go", 327, "annotation.PrometheusMergeMetrics.Name")}},
	{annotation.ProxyConfig.Name, Elsewhere, reasonProxyMoved, []Place{PlaceWaypoint}, []Source{
		code("pilot/cmd/pilot-agent/config/config.go", 54, "annotations[annotation.ProxyConfig.Name]"),
		waypointPodAnnotations}},
	{annotation.ProxyOverrides.Name, Ignored, reasonInjector, nil, []Source{
		code("pkg/kube/inject/webhook.go", 516, "annotation.ProxyOverrides.Name")}},
	{annotation.SidecarStatusReadinessApplicationPorts.Name, Ignored, reasonUnread, nil, []Source{
		link("https://istio.io/latest/docs/reference/config/annotations/#SidecarStatusReadinessApplicationPorts")}},
	{annotation.SidecarStatusReadinessFailureThreshold.Name, Ignored, reasonSidecarReadiness, nil, []Source{
		code(injectionTemplate, 380, "`readiness.status.sidecar.istio.io/failureThreshold`")}},
	{annotation.SidecarStatusReadinessInitialDelaySeconds.Name, Ignored, reasonSidecarReadiness, nil, []Source{
		code(injectionTemplate, 377, "`readiness.status.sidecar.istio.io/initialDelaySeconds`")}},
	{annotation.SidecarStatusReadinessPeriodSeconds.Name, Ignored, reasonSidecarReadiness, nil, []Source{
		code(injectionTemplate, 378, "`readiness.status.sidecar.istio.io/periodSeconds`")}},
	{annotation.SidecarAgentLogLevel.Name, Elsewhere, reasonProxyMoved, []Place{PlaceWaypoint}, []Source{
		code(waypointTemplate, 121, "`sidecar.istio.io/agentLogLevel`")}},
	{annotation.SidecarBootstrapOverride.Name, Ignored, reasonInjector, nil, []Source{
		code(injectionTemplate, 331, "`sidecar.istio.io/bootstrapOverride`")}},
	{annotation.SidecarComponentLogLevel.Name, Elsewhere, reasonProxyMoved, []Place{PlaceWaypoint}, []Source{
		code(waypointTemplate, 119, "`sidecar.istio.io/componentLogLevel`")}},
	{annotation.SidecarDiscoveryAddress.Name, Elsewhere, reasonProxyMoved, []Place{PlaceZtunnel, PlaceWaypoint}, []Source{
		code("pilot/cmd/pilot-agent/config/config.go", 157, "annotation.SidecarDiscoveryAddress.Name"),
		code("manifests/charts/ztunnel/values.yaml", 115, `xdsAddress: ""`),
		waypointPodAnnotations}},
	{annotation.SidecarExtraStatTags.Name, Elsewhere, reasonProxyMoved, []Place{PlaceWaypoint}, []Source{
		code(bootstrapConfig, 250, "annotation.SidecarExtraStatTags.Name"), waypointPodAnnotations}},
	{annotation.SidecarInject.Name, Elsewhere, reasonEnablement, []Place{PlaceDataplaneMode}, []Source{
		code("manifests/charts/istio-cni/values.yaml", 64, "{ key: istio.io/dataplane-mode, operator: NotIn, values: [none] }"),
		pluginAmbientOnly}},
	{annotation.SidecarInterceptionMode.Name, Ignored, reasonCaptureMode, nil, []Source{
		code(sidecarRedirect, 56, "annotation.SidecarInterceptionMode.Name"), pluginAmbientOnly, nodeAgentOverrides}},
	{annotation.SidecarLogLevel.Name, Elsewhere, reasonProxyMoved, []Place{PlaceZtunnel, PlaceWaypoint}, []Source{
		code(waypointTemplate, 117, "`sidecar.istio.io/logLevel`"),
		ztunnelLogLevel}},
	{annotation.SidecarNativeSidecar.Name, Ignored, reasonSidecarOrder, nil, []Source{
		code(injectionTemplate, 29, "`sidecar.istio.io/nativeSidecar`")}},
	{annotation.SidecarProxyCPU.Name, Elsewhere, reasonProxyMoved, []Place{PlaceZtunnel, PlaceWaypointResources}, []Source{
		code(injectionTemplate, 5, "`sidecar.istio.io/proxyCPU`"), ztunnelResources, waypointResources, waypointParametersRef}},
	{annotation.SidecarProxyCPULimit.Name, Elsewhere, reasonProxyMoved, []Place{PlaceZtunnel, PlaceWaypointResources}, []Source{
		code(injectionTemplate, 12, "`sidecar.istio.io/proxyCPULimit`"), ztunnelResources, waypointResources, waypointParametersRef}},
	{annotation.SidecarProxyImage.Name, Elsewhere, reasonProxyMoved, []Place{PlaceZtunnel, PlaceWaypoint}, []Source{
		code(waypointTemplate, 104, "`sidecar.istio.io/proxyImage`"),
		code("manifests/charts/ztunnel/values.yaml", 13, "image: ztunnel")}},
	{annotation.SidecarProxyImageType.Name, Elsewhere, reasonProxyMoved, []Place{PlaceZtunnel, PlaceWaypoint}, []Source{
		code("pilot/pkg/config/kube/gatewaycommon/deploymentcontroller.go", 628, "ProxyImage: inject.ProxyImage("),
		code("pkg/kube/inject/inject.go", 360, "annotation.SidecarProxyImageType.Name"),
		code("manifests/charts/ztunnel/values.yaml", 9, `variant: ""`)}},
	{annotation.SidecarProxyMemory.Name, Elsewhere, reasonProxyMoved, []Place{PlaceZtunnel, PlaceWaypointResources}, []Source{
		code(injectionTemplate, 8, "`sidecar.istio.io/proxyMemory`"), ztunnelResources, waypointResources, waypointParametersRef}},
	{annotation.SidecarProxyMemoryLimit.Name, Elsewhere, reasonProxyMoved, []Place{PlaceZtunnel, PlaceWaypointResources}, []Source{
		code(injectionTemplate, 12, "`sidecar.istio.io/proxyMemoryLimit`"), ztunnelResources, waypointResources, waypointParametersRef}},
	{annotation.SidecarRewriteAppHTTPProbers.Name, Ignored, reasonProbes, nil, []Source{
		code("pkg/kube/inject/app_probe.go", 35, "annotation.SidecarRewriteAppHTTPProbers.Name"),
		code("cni/pkg/iptables/iptables.go", 287, "Handle healthcheck probes from the host node")}},
	{annotation.SidecarStatsCompression.Name, Ignored, reasonUnread, nil, []Source{
		code("releasenotes/notes/48051.yaml", 9, "remove the `sidecar.istio.io/statsCompression` annotation")}},
	{annotation.SidecarStatsEvictionInterval.Name, Elsewhere, reasonProxyMoved, []Place{PlaceWaypoint}, []Source{
		code(bootstrapConfig, 337, "annotation.SidecarStatsEvictionInterval.Name"), waypointPodAnnotations}},
	{annotation.SidecarStatsFlushInterval.Name, Elsewhere, reasonProxyMoved, []Place{PlaceWaypoint}, []Source{
		code(bootstrapConfig, 327, "annotation.SidecarStatsFlushInterval.Name"), waypointPodAnnotations}},
	{annotation.SidecarStatsHistogramBins.Name, Ignored, reasonUnread, nil, []Source{
		link("https://istio.io/latest/docs/reference/config/annotations/#SidecarStatsHistogramBins")}},
	{annotation.SidecarStatsHistogramBuckets.Name, Elsewhere, reasonProxyMoved, []Place{PlaceWaypoint}, []Source{
		code(bootstrapConfig, 301, "annotation.SidecarStatsHistogramBuckets.Name"), waypointPodAnnotations}},
	{annotation.SidecarStatsInclusionPrefixes.Name, Elsewhere, reasonProxyMoved, []Place{PlaceWaypoint}, []Source{
		code(bootstrapConfig, 251, "annotation.SidecarStatsInclusionPrefixes.Name"), waypointPodAnnotations}},
	{annotation.SidecarStatsInclusionRegexps.Name, Elsewhere, reasonProxyMoved, []Place{PlaceWaypoint}, []Source{
		code(bootstrapConfig, 252, "annotation.SidecarStatsInclusionRegexps.Name"), waypointPodAnnotations}},
	{annotation.SidecarStatsInclusionSuffixes.Name, Elsewhere, reasonProxyMoved, []Place{PlaceWaypoint}, []Source{
		code(bootstrapConfig, 253, "annotation.SidecarStatsInclusionSuffixes.Name"), waypointPodAnnotations}},
	{annotation.SidecarStatus.Name, Honoured, reasonHasSidecar, nil, []Source{
		code("cni/pkg/util/enablement_selector.go", 85, "podHasSidecar(pod.Annotations)")}},
	{annotation.SidecarUserVolume.Name, Ignored, reasonInjector, nil, []Source{
		code(injectionTemplate, 544, "`sidecar.istio.io/userVolume`")}},
	{annotation.SidecarUserVolumeMount.Name, Ignored, reasonInjector, nil, []Source{
		code(injectionTemplate, 470, "`sidecar.istio.io/userVolumeMount`")}},
	{annotation.SidecarStatusPort.Name, Ignored, reasonSidecarReadiness, nil, []Source{
		code(injectionTemplate, 362, "`status.sidecar.istio.io/port`")}},
	{annotation.SidecarTrafficExcludeInboundPorts.Name, Ignored, reasonSidecarCapture, nil, []Source{
		code(sidecarRedirect, 50, "annotation.SidecarTrafficExcludeInboundPorts.Name"), pluginAmbientOnly, trafficDoNotWork}},
	{annotation.SidecarTrafficExcludeInterfaces.Name, Ignored, reasonSidecarCapture, nil, []Source{
		code(sidecarRedirect, 54, "annotation.SidecarTrafficExcludeInterfaces.Name"), pluginAmbientOnly, trafficDoNotWork}},
	{annotation.SidecarTrafficExcludeOutboundIPRanges.Name, Ignored, reasonSidecarCapture, nil, []Source{
		code(sidecarRedirect, 49, "annotation.SidecarTrafficExcludeOutboundIPRanges.Name"), pluginAmbientOnly, trafficDoNotWork}},
	{annotation.SidecarTrafficExcludeOutboundPorts.Name, Ignored, reasonSidecarCapture, nil, []Source{
		code(sidecarRedirect, 52, "annotation.SidecarTrafficExcludeOutboundPorts.Name"), pluginAmbientOnly, trafficDoNotWork}},
	{annotation.SidecarTrafficIncludeInboundPorts.Name, Ignored, reasonSidecarCapture, nil, []Source{
		code(sidecarRedirect, 51, "annotation.SidecarTrafficIncludeInboundPorts.Name"), pluginAmbientOnly, trafficDoNotWork}},
	{annotation.SidecarTrafficIncludeOutboundIPRanges.Name, Ignored, reasonSidecarCapture, nil, []Source{
		code(sidecarRedirect, 48, "annotation.SidecarTrafficIncludeOutboundIPRanges.Name"), pluginAmbientOnly, trafficDoNotWork}},
	{annotation.SidecarTrafficIncludeOutboundPorts.Name, Ignored, reasonSidecarCapture, nil, []Source{
		code(sidecarRedirect, 53, "annotation.SidecarTrafficIncludeOutboundPorts.Name"), pluginAmbientOnly, trafficDoNotWork}},
	{annotation.SidecarTrafficKubevirtInterfaces.Name, Elsewhere, reasonRenamed, []Place{PlaceRerouteVirtualInterfaces}, []Source{
		code(sidecarRedirect, 59, "annotation.SidecarTrafficKubevirtInterfaces.Name"),
		code("cni/pkg/nodeagent/net.go", 47, "annotation.IoIstioRerouteVirtualInterfaces.Name")}},
}
