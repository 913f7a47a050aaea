// Command gen writes engine/catalog/proxyconfig_docs.go from mesh/v1alpha1/proxy.proto of the istio.io/api
// module in the module cache (the version go.mod pins). Run by `go generate ./engine/catalog`.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/sidecarlab/sidecarlab/engine/internal/protodoc"
)

func main() {
	out := flag.String("o", "proxyconfig_docs.go", "the Go file to write")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	src, source, err := protodoc.ProxyProto()
	if err != nil {
		return err
	}
	b, err := protodoc.Generate(src, source, "ProxyConfig", "catalog", "proxyConfigDocs")
	if err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o644)
}
