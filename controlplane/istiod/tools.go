//go:build tools

// Package tools records istiod (Istio's pilot-discovery) for `go mod tidy`, at the Istio version
// sidecarlab's engine embeds. It is a module of its own rather than part of ../go.mod: joined with
// Kubernetes' programs, Istio's requirements raise ~110 of theirs (OpenTelemetry, cel-go, …) and
// its gRPC xds test dependencies make cloud.google.com/go's compute/metadata ambiguous.
package tools

import _ "istio.io/istio/pilot/cmd/pilot-discovery"
