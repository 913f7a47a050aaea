// Command sidecarlab shows what Istio's sidecar injection does to a Kubernetes workload: the
// injected manifest, the field-level diff of each annotation, the annotation catalog — and serves
// the same as a web playground. Installed as kubectl-sidecarlab, it is the kubectl plugin
// `kubectl sidecarlab`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	// For its init alone: transparent huge pages for the heap the start fills (Linux).
	_ "github.com/sidecarlab/sidecarlab/internal/hugepages"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := runAs(ctx, commandName(os.Args[0]), os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if err != errSilent {
			fmt.Fprintln(os.Stderr, "sidecarlab:", err)
		}
		os.Exit(exitCode(err))
	}
}
