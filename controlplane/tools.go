//go:build tools

// Package tools records the programs this module builds, so that `go mod tidy` keeps what they
// need: Kubernetes' kube-apiserver, kube-controller-manager and kubectl (k8s.io/kubernetes, its
// staging modules replaced by their published versions in go.mod) and etcd's server (./etcd).
package tools

import (
	_ "go.etcd.io/etcd/server/v3/etcdmain"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
