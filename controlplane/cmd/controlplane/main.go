// Command controlplane starts a Kubernetes control plane for sidecarlab's tests and for people
// who want to poke one: etcd, kube-apiserver and kube-controller-manager (built by this module,
// next to this binary), on free ports of 127.0.0.1, in a directory of its own. The controller
// manager makes what a cluster's controllers make: a namespace's default ServiceAccount (which a
// Pod needs to be admitted), a Deployment's ReplicaSet and Pods, a Job's Pods. It writes a
// kubeconfig there (and the API server an audit log of Pod creations, audit.log, beside it),
// prints its path and waits; on SIGINT or SIGTERM (or when a process it started dies) it stops
// them all and deletes the directory.
//
//	controlplane [-dir DIR] [-ready-file FILE]
//
// -ready-file: once the API server is ready, the kubeconfig's path is written there (for
// scripts that start it in the background and wait for the file).
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "controlplane:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("controlplane", flag.ContinueOnError)
	dir := fs.String("dir", "", "the directory for its data, certificates and logs (default: a new temporary one, deleted at exit)")
	readyFile := fs.String("ready-file", "", "write the kubeconfig's path here once the API server is ready")
	if err := fs.Parse(args); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	bin := filepath.Dir(exe)
	if *dir == "" {
		d, err := os.MkdirTemp("", "sidecarlab-controlplane-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	cp, err := prepare(*dir)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	died := make(chan error, 4)
	start := func(name string, args ...string) (*exec.Cmd, error) {
		logf, err := os.Create(filepath.Join(*dir, name+".log"))
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		go func() {
			err := cmd.Wait()
			logf.Close()
			died <- fmt.Errorf("%s exited (%v); its log: %s", name, err, logf.Name())
		}()
		return cmd, nil
	}
	var procs []*exec.Cmd
	defer func() {
		// The API server first, then etcd.
		for i := len(procs) - 1; i >= 0; i-- {
			p := procs[i]
			_ = p.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _, _ = p.Process.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = p.Process.Kill()
			}
		}
	}()
	etcd, err := start("etcd", cp.etcdArgs()...)
	if err != nil {
		return err
	}
	procs = append(procs, etcd)
	api, err := start("kube-apiserver", cp.apiserverArgs()...)
	if err != nil {
		return err
	}
	procs = append(procs, api)
	if err := cp.waitReady(ctx, died); err != nil {
		return err
	}
	kcm, err := start("kube-controller-manager", cp.controllerManagerArgs()...)
	if err != nil {
		return err
	}
	procs = append(procs, kcm)
	if *readyFile != "" {
		if err := os.WriteFile(*readyFile, []byte(cp.kubeconfig+"\n"), 0o600); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "kube-apiserver ready on https://%s (Ctrl-C stops it). In another shell:\n  export KUBECONFIG=%s\n  %s get namespaces\n",
		cp.apiAddr, cp.kubeconfig, filepath.Join(bin, "kubectl"))
	select {
	case <-ctx.Done():
		return nil
	case err := <-died:
		return err
	}
}

// controlPlane is what the processes are started with.
type controlPlane struct {
	dir                                           string
	etcdClient, etcdPeer, apiAddr, kcmAddr, token string
	kubeconfig                                    string
}

// prepare picks free ports and writes the certificates, the token file and the kubeconfig.
func prepare(dir string) (*controlPlane, error) {
	cp := &controlPlane{dir: dir}
	for _, p := range []*string{&cp.etcdClient, &cp.etcdPeer, &cp.apiAddr, &cp.kcmAddr} {
		a, err := freeAddr()
		if err != nil {
			return nil, err
		}
		*p = a
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return nil, err
	}
	cp.token = fmt.Sprintf("%x", tok)
	caKey, caCert, err := newCA()
	if err != nil {
		return nil, err
	}
	if err := writePEM(filepath.Join(dir, "ca.crt"), "CERTIFICATE", caCert.Raw); err != nil {
		return nil, err
	}
	if err := writeKey(filepath.Join(dir, "ca.key"), caKey); err != nil {
		return nil, err
	}
	servingKey, serving, err := newServing(caKey, caCert)
	if err != nil {
		return nil, err
	}
	if err := writePEM(filepath.Join(dir, "apiserver.crt"), "CERTIFICATE", serving.Raw); err != nil {
		return nil, err
	}
	if err := writeKey(filepath.Join(dir, "apiserver.key"), servingKey); err != nil {
		return nil, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if err := writeKey(filepath.Join(dir, "sa.key"), saKey); err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	if err := writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", pub); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(cp.token+",admin,admin,system:masters\n"), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "audit-policy.yaml"), []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	cp.kubeconfig = filepath.Join(dir, "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: sidecarlab
  cluster:
    server: https://%s
    certificate-authority: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: sidecarlab
  context: {cluster: sidecarlab, user: admin}
current-context: sidecarlab
`, cp.apiAddr, filepath.Join(dir, "ca.crt"), cp.token)
	return cp, os.WriteFile(cp.kubeconfig, []byte(kc), 0o600)
}

// auditPolicy records every Pod creation (dry runs too) at the Metadata level, which carries the
// admission steps' annotations: Pod Security's audit-level verdict
// (pod-security.kubernetes.io/audit-violations) is only to be read there. The log is audit.log,
// next to the kubeconfig.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create]
  resources: [{group: "", resources: [pods]}]
- level: None
`

func (cp *controlPlane) etcdArgs() []string {
	return []string{
		"--name", "sidecarlab", "--data-dir", filepath.Join(cp.dir, "etcd"),
		"--listen-client-urls", "http://" + cp.etcdClient, "--advertise-client-urls", "http://" + cp.etcdClient,
		"--listen-peer-urls", "http://" + cp.etcdPeer, "--initial-advertise-peer-urls", "http://" + cp.etcdPeer,
		"--initial-cluster", "sidecarlab=http://" + cp.etcdPeer, "--log-level", "warn",
		"--unsafe-no-fsync", // a test cluster's data is thrown away
	}
}

func (cp *controlPlane) apiserverArgs() []string {
	host, port, _ := net.SplitHostPort(cp.apiAddr)
	return []string{
		"--etcd-servers", "http://" + cp.etcdClient,
		"--bind-address", host, "--secure-port", port, "--advertise-address", host,
		"--tls-cert-file", filepath.Join(cp.dir, "apiserver.crt"), "--tls-private-key-file", filepath.Join(cp.dir, "apiserver.key"),
		"--client-ca-file", filepath.Join(cp.dir, "ca.crt"),
		"--token-auth-file", filepath.Join(cp.dir, "tokens.csv"),
		"--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", filepath.Join(cp.dir, "sa.pub"),
		"--service-account-signing-key-file", filepath.Join(cp.dir, "sa.key"),
		"--service-cluster-ip-range", "10.96.0.0/16",
		"--cert-dir", filepath.Join(cp.dir, "certs"),
		"--audit-policy-file", filepath.Join(cp.dir, "audit-policy.yaml"),
		"--audit-log-path", filepath.Join(cp.dir, "audit.log"),
	}
}

func (cp *controlPlane) controllerManagerArgs() []string {
	host, port, _ := net.SplitHostPort(cp.kcmAddr)
	return []string{
		"--kubeconfig", cp.kubeconfig, "--authentication-kubeconfig", cp.kubeconfig, "--authorization-kubeconfig", cp.kubeconfig,
		"--bind-address", host, "--secure-port", port, "--cert-dir", filepath.Join(cp.dir, "kcm-certs"),
		"--leader-elect=false",
		"--service-account-private-key-file", filepath.Join(cp.dir, "sa.key"),
		"--root-ca-file", filepath.Join(cp.dir, "ca.crt"),
		"--use-service-account-credentials=false",
	}
}

// waitReady polls /readyz until it answers 200, a process dies, or 2 minutes pass.
func (cp *controlPlane) waitReady(ctx context.Context, died <-chan error) error {
	caPEM, err := os.ReadFile(filepath.Join(cp.dir, "ca.crt"))
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+cp.apiAddr+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+cp.token)
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-died:
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("kube-apiserver was not ready after 2 minutes; see " + filepath.Join(cp.dir, "kube-apiserver.log"))
		}
	}
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

// certificate makes a key and a certificate of tmpl for it, valid from an hour ago for a day,
// signed by parent's key (nil parent: self-signed, a CA).
func certificate(tmpl *x509.Certificate, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, *x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return key, cert, err
}

func newCA() (*ecdsa.PrivateKey, *x509.Certificate, error) {
	return certificate(&x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sidecarlab test CA"},
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil, nil)
}

func newServing(caKey *ecdsa.PrivateKey, ca *x509.Certificate) (*ecdsa.PrivateKey, *x509.Certificate, error) {
	return certificate(&x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca, caKey)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

func writeKey(path string, k *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return err
	}
	return writePEM(path, "EC PRIVATE KEY", der)
}
