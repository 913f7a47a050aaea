// Package sandbox runs work that executes untrusted template text in a worker process that has
// none of the server's rights worth having: a new process (the same binary, in its worker mode)
// started with none of the server's environment and a temporary directory of its own (removed
// when it ends), given its job as JSON on stdin and answering JSON on stdout, under a CPU-time
// and memory limit it sets on itself before reading the job, with no privileges (started as
// root, it becomes an unprivileged user; no_new_privs always), in namespaces of its own where
// they can be made (network, mount with an empty /etc and its own /proc, PID, IPC, UTS: as
// root, or inside a user namespace of its own where the kernel lets an unprivileged user make
// one), with no descriptor but its own, and killed at the caller's deadline. One worker does
// one job and exits, so nothing of one job reaches the next.
//
// The package knows nothing of what the job is (Run and Serve move JSON); engine.go adapts it
// to the engine's Isolator, and later features that bring templates of their own (a cluster's
// injector ConfigMap) use the same two calls.
package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
)

// Limits bound one worker. The worker sets them on itself once running (Go's SysProcAttr has no
// rlimit field, and an address-space limit set before the Go runtime starts stops it starting):
// RLIMIT_CPU, and RLIMIT_AS relative to what it has mapped by then (see setLimits).
type Limits struct {
	// CPUSeconds is the CPU time a worker may use (RLIMIT_CPU; the kernel kills it past that).
	CPUSeconds int
	// MemoryBytes bounds what the worker maps beyond what it had at start (RLIMIT_AS, see
	// setLimits); the Go runtime's own soft limit is 3/4 of it.
	MemoryBytes int64
}

// DefaultMaxOutput is the most a worker may answer when Config sets no bound: as much as a
// manifest may be by default (serve's --max-body). A render's answer, Istio's ConfigMaps, is
// ~120 KB; an injection's is the injected output.
const DefaultMaxOutput = 1 << 20

// DefaultLimits fit a render of Istio's charts (it needs ~192 MiB) with room to spare.
func DefaultLimits() Limits { return Limits{CPUSeconds: 10, MemoryBytes: 384 << 20} }

// Config describes how to start a worker.
type Config struct {
	// Command is the worker: a program and its arguments (`sidecarlab worker`; the second word
	// must be "worker", which keeps the worker on its main thread to harden it); the limits are
	// added as flags.
	Command []string
	Limits  Limits
	// MaxWorkers bounds workers running at once (default GOMAXPROCS); more wait for a turn.
	MaxWorkers int
	// MaxOutput bounds a worker's answer (default DefaultMaxOutput): past it the answer is not
	// read and Run returns an *OutputError. What a template writes ends up in pages and raw
	// outputs, so it is bounded like a manifest (serve passes its --max-body).
	MaxOutput int64
	// NoNetworkNamespace keeps the worker in the server's network namespace even where a new one
	// could be made (for tests of the refusal that applies then).
	NoNetworkNamespace bool
}

// Sandbox starts workers. It is safe for concurrent use.
type Sandbox struct {
	cfg Config
	// ns: the namespaces workers start in (sysProcAttr, harden).
	ns    namespaces
	turns chan struct{}
}

// namespaces are what a worker is started in.
type namespaces int

const (
	// noNamespaces: the server's own (a server that may make none).
	noNamespaces namespaces = iota
	// rootNamespaces: network, mount, PID, IPC and UTS namespaces of its own, made by a root
	// server; the worker then becomes workerID.
	rootNamespaces
	// userNamespaces: the same inside a user namespace of its own, made by a server that is not
	// root; the worker is root there, with the server's user outside, until harden drops every
	// capability.
	userNamespaces
)

// flag is how a worker is told which namespaces it was started in.
func (n namespaces) flag() string {
	switch n {
	case rootNamespaces:
		return "--own-namespaces=root"
	case userNamespaces:
		return "--own-namespaces=user"
	}
	return ""
}

// parseNamespaces reads flag's value.
func parseNamespaces(v string) (namespaces, error) {
	switch v {
	case "":
		return noNamespaces, nil
	case "root":
		return rootNamespaces, nil
	case "user":
		return userNamespaces, nil
	}
	return noNamespaces, fmt.Errorf("--own-namespaces %q: want root or user", v)
}

// New checks that a worker starts and answers, in a network namespace of its own when this
// process may make one (root on Linux), and otherwise without one: IsolatesNetwork says which.
func New(ctx context.Context, cfg Config) (*Sandbox, error) {
	if len(cfg.Command) == 0 {
		return nil, errors.New("sandbox: no worker command")
	}
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits()
	}
	if cfg.MaxWorkers <= 0 {
		cfg.MaxWorkers = runtime.GOMAXPROCS(0)
	}
	if cfg.MaxOutput <= 0 {
		cfg.MaxOutput = DefaultMaxOutput
	}
	if !limitsSupported {
		return nil, fmt.Errorf("sandbox: isolated workers need Linux (rlimits, network namespaces); this is %s", runtime.GOOS)
	}
	// Go opens its own descriptors close-on-exec, but one the server inherited without it (from
	// make, a shell, a supervisor) would pass on to every worker: none may. They are all there
	// from the start, so once is enough (not per worker: a busy server holds many sockets).
	closeOnExec()
	s := &Sandbox{cfg: cfg, turns: make(chan struct{}, cfg.MaxWorkers)}
	if !cfg.NoNetworkNamespace {
		s.ns = rootNamespaces
		if os.Geteuid() != 0 {
			s.ns = userNamespaces
		}
		if err := s.probe(ctx); err == nil {
			return s, nil
		}
		// Not allowed to make them: root in a container without CAP_SYS_ADMIN; a user where the
		// kernel (user.max_user_namespaces 0, an AppArmor or SELinux rule) or a seccomp profile
		// (a container runtime's default refuses CLONE_NEWUSER) forbids a user namespace, or
		// where /proc cannot be mounted in one (a container's /proc with masked paths).
		s.ns = noNamespaces
	}
	if err := s.probe(ctx); err != nil {
		return nil, fmt.Errorf("sandbox: the worker does not start: %w", err)
	}
	return s, nil
}

// IsolatesNetwork reports whether workers run in namespaces of their own: a network namespace
// (nothing but a loopback that is down) and a mount namespace that hides the server's /etc, so
// no name resolves. Without them a worker still makes no socket (its seccomp filter refuses
// every one) but reads the server's /etc/hosts.
func (s *Sandbox) IsolatesNetwork() bool { return s.ns != noNamespaces }

// InUserNamespace reports whether workers make their namespaces inside a user namespace of their
// own (a server that is not root), where IsolatesNetwork is true.
func (s *Sandbox) InUserNamespace() bool { return s.ns == userNamespaces }

// probe starts a worker that sets its limits and answers at once.
func (s *Sandbox) probe(ctx context.Context) error {
	var ok struct{ OK bool }
	if err := s.run(ctx, []string{"--probe"}, struct{}{}, &ok); err != nil {
		return err
	}
	if !ok.OK {
		return errors.New("the probe got no answer")
	}
	return nil
}

// LimitError says a worker went over one of its limits and was stopped.
type LimitError struct {
	// What is the limit: "CPU time" or "memory".
	What   string
	Limits Limits
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("the worker went over its %s limit (%d CPU seconds, %d MiB) and was stopped", e.What, e.Limits.CPUSeconds, e.Limits.MemoryBytes>>20)
}

// OutputError says a worker answered more than Config.MaxOutput bytes: the answer was not read.
type OutputError struct {
	Max int64
}

func (e *OutputError) Error() string {
	return fmt.Sprintf("the worker answered more than %d bytes (its bound) and was not read", e.Max)
}

// Run does one job in a new worker: job goes to its stdin as JSON, its answer is decoded from its
// stdout into result. It waits for a turn (MaxWorkers), and kills the worker when ctx ends, then
// returns ctx's error. A worker over its limits gives a *LimitError.
func (s *Sandbox) Run(ctx context.Context, job, result any) error {
	return s.run(ctx, nil, job, result)
}

func (s *Sandbox) run(ctx context.Context, extra []string, job, result any) error {
	in, err := json.Marshal(job)
	if err != nil {
		return err
	}
	select {
	case s.turns <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.turns }()

	args := append([]string{}, s.cfg.Command[1:]...)
	args = append(args, fmt.Sprintf("--cpu-seconds=%d", s.cfg.Limits.CPUSeconds), fmt.Sprintf("--memory-bytes=%d", s.cfg.Limits.MemoryBytes))
	if f := s.ns.flag(); f != "" {
		args = append(args, f)
	}
	args = append(args, extra...)
	// A directory of the worker's own for its temporary files (a render writes the install
	// overlay to one), removed when it ends: a worker killed at its deadline or a limit runs no
	// deferred removal, and each left a file in the server's /tmp (an emptyDir in the chart,
	// which a stream of such requests would fill).
	tmp, err := os.MkdirTemp("", "sidecarlab-worker-")
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := giveToWorker(tmp); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	cmd := exec.CommandContext(ctx, s.cfg.Command[0], args...)
	// Nothing of the server's environment (nil would pass it all on): only where temporary
	// files go, which Go's os.TempDir reads.
	cmd.Env = []string{"TMPDIR=" + tmp}
	cmd.Dir = tmp
	cmd.Stdin = bytes.NewReader(in)
	// The answer comes on a pipe of its own (the worker's fd 3), so that whatever a library
	// prints on stdout cannot garble it; stdout and stderr are kept only for diagnosis.
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	defer pr.Close()
	cmd.ExtraFiles = []*os.File{pw}
	output := &capture{max: 8 << 10}
	cmd.Stdout, cmd.Stderr = output, output
	cmd.SysProcAttr = sysProcAttr(s.ns)
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		pw.Close()
		return fmt.Errorf("worker: %w", err)
	}
	pw.Close()
	answer := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(pr, s.cfg.MaxOutput+1))
		_, _ = io.Copy(io.Discard, pr) // a worker writing more is not left blocked
		answer <- b
	}()
	runErr := cmd.Wait()
	out := <-answer
	if err := ctx.Err(); err != nil {
		return err
	}
	if runErr != nil {
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			ws, _ := ee.Sys().(syscall.WaitStatus)
			var sig syscall.Signal
			if ws.Signaled() {
				sig = ws.Signal()
			}
			if what := diedOf(output.String(), sig, ee.UserTime()+ee.SystemTime(), s.cfg.Limits); what != "" {
				return &LimitError{What: what, Limits: s.cfg.Limits}
			}
		}
		return fmt.Errorf("worker: %v: %s", runErr, why(output.String()))
	}
	if int64(len(out)) > s.cfg.MaxOutput {
		return &OutputError{Max: s.cfg.MaxOutput}
	}
	if err := json.Unmarshal(out, result); err != nil {
		return fmt.Errorf("worker: its answer is not JSON: %v", err)
	}
	return nil
}

// cpuLimitLine is what a worker says on stderr when the kernel tells it (SIGXCPU) that its CPU
// time is up, before it exits.
const cpuLimitLine = "sandbox: the CPU time limit was reached"

// diedOf says which limit a worker that failed went over: "CPU time", "memory", or "" when it
// died of something else. It reads the worker's output, the signal that killed it (0 when none)
// and the CPU time it used.
//   - The worker says so itself when the kernel signals its soft CPU limit (cpuLimitLine).
//   - A worker killed (SIGKILL) without a word was stopped by the kernel: at its hard CPU limit,
//     one second after the soft one, when it could not answer SIGXCPU; or by the OOM killer. It
//     is the CPU limit if the worker used at least its soft limit's worth. The kernel counts that
//     limit in ticks and wait4 reports the scheduler's exact time, which on a busy virtual machine
//     can be a fifth lower (a tick is charged whole to the task it interrupts): so the soft limit,
//     not the hard one, is the mark. Before: the hard limit less 100 ms, which called a worker
//     killed at its CPU limit on a busy machine "over its memory limit".
//   - The Go runtime's own last words when memory ran out (outOfMemory).
func diedOf(output string, killedBy syscall.Signal, cpu time.Duration, l Limits) string {
	switch {
	case strings.Contains(output, cpuLimitLine),
		killedBy == syscall.SIGKILL && cpu >= time.Duration(l.CPUSeconds)*time.Second:
		return "CPU time"
	case outOfMemory(output), killedBy == syscall.SIGKILL:
		return "memory"
	}
	return ""
}

// outOfMemory says a worker's last words are the Go runtime dying for want of memory: "runtime:
// out of memory" when the heap could not grow, "runtime: cannot allocate memory" when a mapping
// (an arena, a stack) could not be made, and, in a cgo build, "runtime/cgo: pthread_create
// failed" when the stack of a new thread could not be mapped (glibc says EAGAIN; the worker has
// no process limit, only RLIMIT_AS). Under RLIMIT_AS any of them can come first, depending on
// what the program was doing when it reached the limit: the GC of a worker near its limit starts
// threads, so each of the last two failed TestIsolatedTemplates as an internal error (a 500).
func outOfMemory(output string) bool {
	return strings.Contains(output, "out of memory") || strings.Contains(output, "cannot allocate memory") ||
		strings.Contains(output, "runtime/cgo: pthread_create failed")
}

// Serve is the worker's side. Before anything else it sets the limits its flags give on itself;
// then it reads one job from stdin, calls do and writes the answer to fd 3, the pipe Run reads
// it from. With --probe it answers {"OK": true} at once.
func Serve(ctx context.Context, args []string, stdin io.Reader, do func(ctx context.Context, job json.RawMessage) (any, error)) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	var l Limits
	var probe bool
	fs.IntVar(&l.CPUSeconds, "cpu-seconds", 0, "CPU time limit")
	fs.Int64Var(&l.MemoryBytes, "memory-bytes", 0, "memory limit")
	var ownNS string
	fs.BoolVar(&probe, "probe", false, "set the limits and answer at once")
	fs.StringVar(&ownNS, "own-namespaces", "", "started in namespaces of its own, made as root or in a user namespace (hide /etc, mount /proc)")
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return err
	}
	ns, err := parseNamespaces(ownNS)
	if err != nil {
		return err
	}
	if l.CPUSeconds <= 0 || l.MemoryBytes <= 0 {
		return errors.New("worker: --cpu-seconds and --memory-bytes are required")
	}
	if err := harden(ns); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	if err := setLimits(l); err != nil {
		return fmt.Errorf("worker: limits: %w", err)
	}
	// Last, once nothing but the job is left to do: the system calls it may make.
	if err := lockDown(); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	debug.SetMemoryLimit(l.MemoryBytes / 4 * 3)
	answer := os.NewFile(3, "answer")
	if answer == nil {
		return errors.New("worker: no answer pipe (fd 3); the worker is started by sandbox.Run")
	}
	defer answer.Close()
	enc := json.NewEncoder(answer)
	if probe {
		return enc.Encode(struct{ OK bool }{true})
	}
	job, err := io.ReadAll(stdin)
	if err != nil {
		return err
	}
	res, err := do(ctx, job)
	if err != nil {
		return err
	}
	return enc.Encode(res)
}

// capture keeps the first and the last bytes a worker writes on stdout and stderr, for
// diagnosis: a Go program that dies says why first ("fatal error: out of memory", "panic: …")
// and then dumps its goroutines, which may be much longer than what is kept of the end.
type capture struct {
	max        int // of the head, and of the tail
	head, tail []byte
}

func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	if room := c.max - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head, p = append(c.head, p[:k]...), p[k:]
	}
	c.tail = append(c.tail, p...)
	if len(c.tail) > c.max {
		c.tail = c.tail[len(c.tail)-c.max:]
	}
	return n, nil
}

func (c *capture) String() string { return string(c.head) + string(c.tail) }

// why is the line that says why the worker died: Go's "fatal error:", "panic:", "runtime/cgo:"
// or fatal signal ("SIGABRT: abort") line, else its last line (of a crash dump, a register).
func why(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "runtime/cgo:") || strings.HasPrefix(l, "SIG") && strings.Contains(l, ": ") {
			return l
		}
	}
	return lines[len(lines)-1]
}
