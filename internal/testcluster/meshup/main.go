// Command meshup starts the cluster sidecarlab's conformance tests ask: controlplane/'s launcher
// (etcd, kube-apiserver and kube-controller-manager on free 127.0.0.1 ports), then Istio in it as
// the engine renders it, with its istiods running here (package testcluster). It prints the
// kubeconfig and waits; on SIGINT or SIGTERM, or when a process it started dies, it stops them
// all and deletes their directories. `make controlplane` runs it; scripts/testenv.sh runs it for
// `make test`.
//
//	meshup -bin DIR [-ready-file FILE]
//
// -bin: where `make controlplane-bin` built the control plane's programs. -ready-file: once Istio
// is ready, "kubeconfig: PATH" is written there, at once (testkit.Kubeconfig reads it).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sidecarlab/sidecarlab/internal/testcluster"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "meshup:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("meshup", flag.ContinueOnError)
	bin := fs.String("bin", "", "the directory of the control plane's programs (make controlplane-bin)")
	readyFile := fs.String("ready-file", "", "write the kubeconfig's path here once Istio is ready")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *bin == "" {
		return errors.New("-bin is required")
	}
	dir, err := os.MkdirTemp("", "sidecarlab-meshup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	// The launcher: it writes the kubeconfig's path once the API server is ready.
	launcherReady := filepath.Join(dir, "controlplane-ready")
	logf, err := os.Create(filepath.Join(dir, "controlplane.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	launcher := exec.Command(filepath.Join(*bin, "controlplane"), "-ready-file", launcherReady)
	launcher.Stdout, launcher.Stderr = logf, logf
	launcher.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := launcher.Start(); err != nil {
		return err
	}
	launcherDone := make(chan struct{})
	go func() { _ = launcher.Wait(); close(launcherDone) }()
	defer func() {
		// The launcher stops its programs and deletes its directory on TERM.
		_ = launcher.Process.Signal(syscall.SIGTERM)
		select {
		case <-launcherDone:
		case <-time.After(30 * time.Second):
			_ = launcher.Process.Kill()
			<-launcherDone
		}
	}()
	launcherFailed := func() error {
		b, _ := os.ReadFile(logf.Name())
		return fmt.Errorf("the control plane's launcher exited; its output:\n%s", b)
	}
	var kubeconfig string
	for kubeconfig == "" {
		if b, err := os.ReadFile(launcherReady); err == nil && len(b) > 0 {
			kubeconfig = strings.TrimSpace(string(b))
			break
		}
		select {
		case <-launcherDone:
			return launcherFailed()
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}

	installCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	mesh, err := testcluster.Install(installCtx, kubeconfig, *bin, filepath.Join(dir, "istio"))
	if err != nil {
		return err
	}
	defer mesh.Stop()
	if *readyFile != "" {
		// Whole or not at all: the tests read it while it may be written (testkit.Kubeconfig).
		tmp := *readyFile + ".tmp"
		if err := os.WriteFile(tmp, []byte("kubeconfig: "+kubeconfig+"\n"), 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, *readyFile); err != nil {
			return err
		}
	}
	var revs []string
	for _, r := range testcluster.Revisions {
		revs = append(revs, fmt.Sprintf("%s (%s)", r.Name, strings.Join(r.Set, " ")))
	}
	fmt.Fprintf(stdout, `Kubernetes %s with Istio (revisions %s) is ready; Ctrl-C stops it. In another shell:
  export KUBECONFIG=%s
  kubectl label namespace default istio-injection=enabled
  kubectl run web --image=nginx --dry-run=server -o yaml
(kubectl is %s)
`, testcluster.KubernetesVersion, strings.Join(revs, ", "), kubeconfig, filepath.Join(*bin, "kubectl"))
	select {
	case <-ctx.Done():
		return nil
	case <-launcherDone:
		return launcherFailed()
	case <-mesh.Died():
		logs, _ := filepath.Glob(filepath.Join(dir, "istio", "*", "istiod.log"))
		var tails []string
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			tails = append(tails, l+":\n"+string(b))
		}
		return fmt.Errorf("an istiod exited; the end of the logs:\n%s", strings.Join(tails, "\n"))
	}
}
