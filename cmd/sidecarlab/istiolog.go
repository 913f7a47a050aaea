package main

import (
	"bytes"
	"io"
	"net/url"
	"strings"
	"sync"

	"go.uber.org/zap"
	"istio.io/istio/istioctl/pkg/root"
	istiolog "istio.io/istio/pkg/log"
)

// Istio's library logs through its own logger (istio.io/istio/pkg/log), which is the process's:
// the injector's log.Warnf for an inject value it does not read ("Invalid value for
// sidecar.istio.io/inject: …"), its log.Errorf before it fails a pod for its annotations, the fake
// clusters' chatter. Every command runs with it off (quietIstio); inject turns it on at istioctl's
// levels while Istio injects (captureIstio) and prints what it wrote on stderr, where istioctl
// kube-inject prints it. serve never does: its log is its own.

// quietIstio turns off the Istio library's own logging.
func quietIstio() {
	o := istiolog.DefaultOptions()
	o.SetDefaultOutputLevel(istiolog.OverrideScopeName, istiolog.NoneLevel)
	_ = istiolog.Configure(o)
}

// istioLogScheme is the zap sink Istio's logger writes to while a command captures it: Istio's
// options name their outputs by path or URL only, and zap opens a URL of a scheme registered
// with it.
const istioLogScheme = "sidecarlab-istio"

// istioSink forwards what Istio's logger writes to the capture of the moment. It is
// package-level because the logger it serves is: zap's sink registry and Istio's logger are
// the process's, and the scheme can be registered once only.
var istioSink = &forwardSink{}

// registerIstioSink registers istioLogScheme with zap, once.
var registerIstioSink = sync.OnceValue(func() error {
	return zap.RegisterSink(istioLogScheme, func(*url.URL) (zap.Sink, error) { return istioSink, nil })
})

// forwardSink is a zap.Sink that writes to to, or nowhere when to is nil.
type forwardSink struct {
	mu sync.Mutex
	to *istioLines
}

func (s *forwardSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.to == nil {
		return len(p), nil
	}
	return s.to.write(p)
}

func (s *forwardSink) Sync() error  { return nil }
func (s *forwardSink) Close() error { return nil }

// istioLines is what Istio's logger wrote during one capture, in the format istioctl prints it
// (its console encoder: time, level, message, fields), and how many entries: zap writes each
// entry in one write.
type istioLines struct {
	b    bytes.Buffer
	ends []int // where each entry ends in b
}

func (l *istioLines) write(p []byte) (int, error) {
	n, err := l.b.Write(p)
	l.ends = append(l.ends, l.b.Len())
	return n, err
}

// entries is how many entries Istio's logger wrote.
func (l *istioLines) entries() int { return len(l.ends) }

// captureIstio turns Istio's logger on, at the levels istioctl sets (istioctl's own
// LoggingOptions: warnings and errors, the noisiest scopes errors only), writing into the
// istioLines it returns; release turns it off again, after which the lines may be read.
func captureIstio() (lines *istioLines, release func(), err error) {
	if err := registerIstioSink(); err != nil {
		return nil, nil, err
	}
	o := *root.LoggingOptions
	o.OutputPaths = []string{istioLogScheme + ":"}
	lines = &istioLines{}
	istioSink.mu.Lock()
	istioSink.to = lines
	istioSink.mu.Unlock()
	release = func() {
		quietIstio()
		istioSink.mu.Lock()
		if istioSink.to == lines {
			istioSink.to = nil
		}
		istioSink.mu.Unlock()
	}
	if err := istiolog.Configure(&o); err != nil {
		release()
		return nil, nil, err
	}
	return lines, release, nil
}

// printIstioLines writes what Istio's logger wrote, as istioctl prints it, but for an error entry
// that says again what one of errs (the errors the command reports after it) says: one message
// per error. istioctl prints Istio's "error\tInvalid template: template: inject:192:12: …" and
// then its own "Error: failed to run injection template: template: inject:192:12: …".
func printIstioLines(w io.Writer, lines *istioLines, errs []error) {
	if lines == nil {
		return
	}
	start := 0
	for _, end := range lines.ends {
		entry := lines.b.Bytes()[start:end]
		start = end
		if !restated(string(entry), errs) {
			_, _ = w.Write(entry)
		}
	}
}

// restated says entry, one of Istio's log entries (time, level, message and fields, tab-separated;
// a message of several errors runs on over lines "\t* …"), is an error whose message is in one of
// errs: its first line's message, or what follows its first ": ", or, for several lines, its
// last error.
func restated(entry string, errs []error) bool {
	lines := strings.Split(strings.TrimSpace(entry), "\n")
	fields := strings.Split(lines[0], "\t")
	if len(fields) < 3 || fields[1] != "error" {
		return false
	}
	msg := fields[2]
	_, rest, _ := strings.Cut(msg, ": ")
	if len(lines) > 1 {
		msg, rest = strings.TrimPrefix(strings.TrimSpace(lines[len(lines)-1]), "* "), ""
	}
	for _, err := range errs {
		if e := err.Error(); strings.Contains(e, msg) || rest != "" && strings.Contains(e, rest) {
			return true
		}
	}
	return false
}
