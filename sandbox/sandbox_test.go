package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	seccomp "github.com/elastic/go-seccomp-bpf"

	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/wording"
)

// The test binary is its own worker: started as "worker", it serves testJob instead of testing.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "report-as" {
		// A server started as another user (TestWorkerPrivileges): it makes a sandbox of this
		// binary and prints what its worker reports. It holds a descriptor open without
		// close-on-exec first, as one inherited from a shell would be: the worker must not get it.
		canary := filepath.Join(os.TempDir(), fmt.Sprintf("leak-canary-%d", os.Getpid()))
		if fd, err := syscall.Open(canary, syscall.O_CREAT|syscall.O_RDWR, 0o600); err == nil {
			defer syscall.Close(fd)
			defer os.Remove(canary)
		}
		if len(os.Args) > 3 && os.Args[3] == "confined" {
			// As a container runtime's default seccomp profile has it: no user namespace.
			if err := refuseUserNamespaces(); err != nil {
				fmt.Println("error:", err)
				os.Exit(0)
			}
		}
		s, err := New(context.Background(), Config{Command: []string{os.Args[0], "worker"}})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(0)
		}
		var a answer
		if err := s.Run(context.Background(), job{Op: "report", Name: os.Args[2]}, &a); err != nil {
			fmt.Println("error:", err)
			os.Exit(0)
		}
		fmt.Println(a.Value)
		return // the deferred closes run; the exit code is 0
	}
	if len(os.Args) > 1 && os.Args[1] == "try-user-namespace" {
		if err := userNamespaceAllowed(); err != nil {
			fmt.Println(err)
		} else {
			fmt.Println("ok")
		}
		os.Exit(0)
	}
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		if err := Serve(context.Background(), os.Args[2:], os.Stdin, testJob); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// job is what the test worker does: read an environment variable, spin, allocate, or connect.
type job struct {
	Op    string `json:"op"`
	Name  string `json:"name,omitempty"`
	Bytes int    `json:"bytes,omitempty"`
}

type answer struct {
	Value string `json:"value"`
}

func testJob(_ context.Context, raw json.RawMessage) (any, error) {
	var j job
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, err
	}
	return do(j), nil
}

var sink []byte

func do(j job) answer {
	switch j.Op {
	case "env":
		return answer{os.Getenv(j.Name)}
	case "spin":
		for {
		}
	case "alloc":
		sink = make([]byte, j.Bytes)
		for i := range sink {
			sink[i] = 1
		}
		return answer{fmt.Sprint(len(sink))}
	case "crowd-alloc":
		// Many goroutines, so that the runtime's dump when it dies is far longer than what is
		// kept of the output's end: the "out of memory" line comes first.
		block := make(chan struct{})
		for range 2000 {
			go func() { <-block }()
		}
		sink = make([]byte, j.Bytes)
		for i := range sink {
			sink[i] = 1
		}
		close(block)
		return answer{fmt.Sprint(len(sink))}
	case "threads":
		// Threads until one cannot be made: each goroutine holds an OS thread of its own, whose
		// stack (pthread's, in a cgo build) is mapped outside Go's heap.
		block := make(chan struct{})
		for {
			go func() { runtime.LockOSThread(); <-block }()
			runtime.Gosched()
		}
	case "report":
		// What the worker holds: its ids, capabilities, no_new_privs, namespaces, /etc, whether
		// it resolves j.Name (a name of the server's /etc/hosts), its descriptors.
		r := map[string]string{"uid": fmt.Sprint(os.Getuid()), "gid": fmt.Sprint(os.Getgid())}
		groups, _ := os.Getgroups()
		r["groups"] = fmt.Sprint(groups)
		st, _ := procStatus()
		for _, k := range []string{"CapEff", "CapPrm", "CapAmb", "CapBnd", "NoNewPrivs", "Seccomp", "Seccomp_filters"} {
			r[k] = st[k]
		}
		// What the seccomp filter refuses: a socket, a program, a process.
		if fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0); err != nil {
			r["socket"] = err.Error()
		} else {
			syscall.Close(fd)
			r["socket"] = "made"
		}
		if err := exec.Command("/bin/true").Run(); err != nil {
			r["exec"] = err.Error()
		} else {
			r["exec"] = "ran"
		}
		if _, _, e := syscall.RawSyscall(syscall.SYS_FORK, 0, 0, 0); e != 0 {
			r["fork"] = e.Error()
		} else {
			r["fork"] = "forked"
		}
		for _, ns := range []string{"mnt", "pid", "net", "ipc", "uts", "user"} {
			r["ns-"+ns], _ = os.Readlink("/proc/self/ns/" + ns)
		}
		if b, err := os.ReadFile("/proc/self/uid_map"); err == nil {
			r["uid_map"] = strings.Join(strings.Fields(string(b)), " ")
		}
		r["fds"] = descriptors()
		etc, err := os.ReadDir("/etc")
		r["etc"] = fmt.Sprint(len(etc), err)
		r["pid"] = fmt.Sprint(os.Getpid())
		if j.Name != "" {
			_, err := net.LookupHost(j.Name)
			r["resolves"] = fmt.Sprint(err == nil)
		}
		b, _ := json.Marshal(r)
		return answer{string(b)}
	case "fds":
		return answer{descriptors()}
	case "tempfile", "tempfile-spin":
		// A temporary file left behind, as a render killed before its deferred removal leaves
		// the install overlay's: answered, or left while it spins until it is killed.
		f, err := os.CreateTemp("", "left-*.yaml")
		if err != nil {
			return answer{"error: " + err.Error()}
		}
		f.Close()
		if j.Op == "tempfile-spin" {
			for {
			}
		}
		return answer{f.Name()}
	case "write":
		return answer{strings.Repeat("a", j.Bytes)}
	case "dial":
		c, err := net.DialTimeout("tcp", j.Name, time.Second)
		if err != nil {
			return answer{"error: " + err.Error()}
		}
		c.Close()
		return answer{"connected"}
	}
	return answer{"unknown op"}
}

// descriptors lists every descriptor open in the worker, and what it is: "3=pipe:[…] 4=…".
func descriptors() string {
	entries, _ := os.ReadDir("/proc/self/fd")
	var out []string
	for _, e := range entries {
		target, _ := os.Readlink("/proc/self/fd/" + e.Name())
		out = append(out, e.Name()+"="+target)
	}
	return strings.Join(out, " ")
}

// foreign are the descriptors of a listing (descriptors) above the answer pipe that the worker
// did not open itself (Go's poller, its /proc and cgroup reads): ones it inherited. It fails the
// test when the listing lacks the answer pipe, which would prove nothing.
func foreign(t *testing.T, listing string) []string {
	t.Helper()
	if !strings.Contains(listing, "3=pipe:") {
		t.Fatalf("the worker's descriptors %q lack the answer pipe: the listing proves nothing", listing)
	}
	var out []string
	for _, f := range strings.Fields(listing) {
		n, target, _ := strings.Cut(f, "=")
		own := target == "" || strings.HasPrefix(target, "anon_inode:") || strings.HasPrefix(target, "/proc/") || strings.HasPrefix(target, "/sys/fs/cgroup/")
		if i, _ := strconv.Atoi(n); i > 3 && !own {
			out = append(out, f)
		}
	}
	return out
}

func newSandbox(t *testing.T, cfg Config) *Sandbox {
	t.Helper()
	cfg.Command = []string{os.Args[0], "worker"}
	s, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func run(t *testing.T, s *Sandbox, ctx context.Context, j job) (string, error) {
	t.Helper()
	var a answer
	err := s.Run(ctx, j, &a)
	return a.Value, err
}

// TestEmptyEnvironment: the worker sees none of the server's environment; in process, the same
// job does.
func TestEmptyEnvironment(t *testing.T) {
	t.Setenv("SIDECARLAB_TEST_SECRET", "canary-31f0")
	if got := do(job{Op: "env", Name: "SIDECARLAB_TEST_SECRET"}).Value; got != "canary-31f0" {
		t.Fatalf("in process: %q", got)
	}
	got, err := run(t, newSandbox(t, Config{}), t.Context(), job{Op: "env", Name: "SIDECARLAB_TEST_SECRET"})
	if err != nil || got != "" {
		t.Fatalf("the worker read %q (%v)", got, err)
	}
}

// TestDeadline: a worker still running at the caller's deadline is killed at once, and the
// turn it held is free again.
func TestDeadline(t *testing.T) {
	s := newSandbox(t, Config{MaxWorkers: 1, Limits: Limits{CPUSeconds: 60, MemoryBytes: 256 << 20}})
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	before := childCPU(t)
	_, err := run(t, s, ctx, job{Op: "spin"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the deadline", err)
	}
	// Killed at the deadline, the worker spun for half a second of wall time, so at most that
	// much CPU however busy the machine; left to spin, it would have used its 60 s limit. Told
	// apart in work, not in the time the call took.
	if used := childCPU(t) - before; used > 30*time.Second {
		t.Errorf("the spinning worker used %v of CPU: it was not killed at the deadline", used)
	}
	if got, err := run(t, s, t.Context(), job{Op: "alloc", Bytes: 1 << 20}); err != nil || got != "1048576" {
		t.Fatalf("the next job: %q %v", got, err)
	}
}

// TestWorkerTempFiles: a worker's temporary files go to a directory of its own, under the
// server's temporary directory, which is gone once the worker ends, whether it answered or was
// killed at the deadline before it could remove what it wrote.
func TestWorkerTempFiles(t *testing.T) {
	// The server's temporary directory; others may traverse it, as /tmp, for a worker that
	// becomes another user (a root server's).
	root, err := os.MkdirTemp("", "sandbox-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", root)
	left := func() []string {
		m, _ := filepath.Glob(filepath.Join(root, "*", "left-*"))
		return m
	}
	s := newSandbox(t, Config{MaxWorkers: 1, Limits: Limits{CPUSeconds: 60, MemoryBytes: 256 << 20}})

	got, err := run(t, s, t.Context(), job{Op: "tempfile"})
	if err != nil || strings.HasPrefix(got, "error: ") {
		t.Fatalf("tempfile: %q %v", got, err)
	}
	if !strings.HasPrefix(got, root+string(filepath.Separator)) {
		t.Fatalf("the worker wrote %s, outside the server's temporary directory %s", got, root)
	}
	if _, err := os.Stat(got); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s is still there once the worker answered (%v)", got, err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := run(t, s, ctx, job{Op: "tempfile-spin"})
		done <- err
	}()
	testkit.WaitFor(t, "the spinning worker's temporary file", func() bool { return len(left()) > 0 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the spinning worker: %v, want it stopped", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("the killed worker left %v in the server's temporary directory", left())
	}
}

// childCPU is the CPU time of this process's children that have ended and been waited for.
func childCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestCPULimit: a worker spinning past its CPU time is killed by the kernel, even with no
// deadline, and the error says which limit.
func TestCPULimit(t *testing.T) {
	s := newSandbox(t, Config{Limits: Limits{CPUSeconds: 1, MemoryBytes: 256 << 20}})
	_, err := run(t, s, t.Context(), job{Op: "spin"})
	var le *LimitError
	if !errors.As(err, &le) || le.What != "CPU time" {
		t.Fatalf("err %v, want the CPU time limit", err)
	}
}

// TestDiedOf: which limit a dead worker went over, from what it said, the signal that killed it
// and the CPU time it used. A worker killed at 0.8 s of a 1 s limit on a busy virtual machine
// (the kernel counts ticks; wait4 reports less) was called out of memory before.
func TestDiedOf(t *testing.T) {
	l := Limits{CPUSeconds: 1, MemoryBytes: 256 << 20}
	for _, c := range []struct {
		name   string
		output string
		sig    syscall.Signal
		cpu    time.Duration
		want   string
	}{
		{"it said its CPU time was up", cpuLimitLine + "\n", 0, 800 * time.Millisecond, "CPU time"},
		{"killed at the hard limit", "", syscall.SIGKILL, 1700 * time.Millisecond, "CPU time"},
		{"killed with little CPU used (the OOM killer)", "", syscall.SIGKILL, 200 * time.Millisecond, "memory"},
		{"the runtime ran out of memory", "fatal error: runtime: out of memory\n", 0, 300 * time.Millisecond, "memory"},
		{"a thread's stack could not be mapped", "runtime/cgo: pthread_create failed: Resource temporarily unavailable\n", syscall.SIGABRT, 0, "memory"},
		{"a panic", "panic: boom\n", 0, 2 * time.Second, ""},
		{"a segfault", "", syscall.SIGSEGV, 2 * time.Second, ""},
	} {
		if got := diedOf(c.output, c.sig, c.cpu, l); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestMemoryLimit: a worker allocating past its memory limit dies of it; one within it does not.
func TestMemoryLimit(t *testing.T) {
	s := newSandbox(t, Config{Limits: Limits{CPUSeconds: 10, MemoryBytes: 256 << 20}})
	_, err := run(t, s, t.Context(), job{Op: "alloc", Bytes: 1 << 30})
	var le *LimitError
	if !errors.As(err, &le) || le.What != "memory" {
		t.Fatalf("err %v, want the memory limit", err)
	}
	if got, err := run(t, s, t.Context(), job{Op: "alloc", Bytes: 32 << 20}); err != nil || got != fmt.Sprint(32<<20) {
		t.Fatalf("32 MiB: %q %v", got, err)
	}
	// A worker whose death dumps thousands of goroutines is still seen to die of memory (its
	// output's end is the dump, not the reason). Before: an internal error (a 500) naming the
	// dump's last frame.
	if _, err := run(t, s, t.Context(), job{Op: "crowd-alloc", Bytes: 1 << 30}); !errors.As(err, &le) || le.What != "memory" {
		t.Fatalf("many goroutines: err %v, want the memory limit", err)
	}
	// A worker that cannot map the stack of a new thread is at its memory limit too.
	if _, err := run(t, s, t.Context(), job{Op: "threads"}); !errors.As(err, &le) || le.What != "memory" {
		t.Fatalf("threads: err %v, want the memory limit", err)
	}
}

// TestNoInheritedDescriptors: a descriptor the server holds open without close-on-exec (as one
// inherited from make or a shell is) does not reach the worker, which has stdin, stdout,
// stderr, the answer pipe and the runtime's own (its poller, the cgroup files it reads its CPU
// limit from, the listing's own). Before: the canary, and make's jobserver pipe (fd 251).
func TestNoInheritedDescriptors(t *testing.T) {
	canary := filepath.Join(t.TempDir(), "leak-canary")
	fd, err := syscall.Open(canary, syscall.O_CREAT|syscall.O_RDWR, 0o600) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	s := newSandbox(t, Config{})
	got, err := run(t, s, t.Context(), job{Op: "fds"})
	if err != nil {
		t.Fatal(err)
	}
	if f := foreign(t, got); len(f) > 0 {
		t.Errorf("the worker has descriptors open: %v (the server's fd %d is %s)", f, fd, canary)
	}
}

// TestWorkerPrivileges: the worker holds none of the server's privileges, whether the server
// runs as root (here: it becomes uid and gid 65532 with no groups and an empty capability
// bounding set, in namespaces of its own, with an empty /etc and its own /proc, so a name of the
// server's /etc/hosts does not resolve), as the chart's unprivileged user 65532 where the kernel
// lets it make a user namespace (the same namespaces inside one of its own: root there, 65532
// outside, with no capabilities and an empty bounding set), or as that user where user namespaces
// are refused, as a container runtime's default seccomp profile refuses them (no namespaces: the
// same user, no capabilities); no_new_privs in each. Before: uid 0 with every capability, in the
// server's mount and PID namespaces, resolving /etc/hosts; and before that a server that was not
// root never tried a user namespace.
func TestWorkerPrivileges(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the test starts a server as another user: it needs root")
	}
	hostsName := ""
	if b, err := os.ReadFile("/etc/hosts"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && !strings.HasPrefix(f[0], "#") && f[1] != "localhost" {
				hostsName = f[1]
				break
			}
		}
	}
	parent := map[string]string{}
	for _, ns := range []string{"mnt", "pid", "net", "ipc", "uts", "user"} {
		parent["ns-"+ns], _ = os.Readlink("/proc/self/ns/" + ns)
	}
	if hostsName != "" {
		if _, err := net.LookupHost(hostsName); err != nil {
			t.Fatalf("%s, of /etc/hosts, does not resolve here either: %v", hostsName, err)
		}
	}
	check := func(t *testing.T, got string, ns namespaces) {
		var r map[string]string
		if err := json.Unmarshal([]byte(got), &r); err != nil {
			t.Fatalf("the worker's report: %s", got)
		}
		t.Logf("%v", r)
		want := map[string]string{"uid": "65532", "gid": "65532", "groups": "[]", "CapEff": "0000000000000000",
			"CapPrm": "0000000000000000", "CapAmb": "0000000000000000", "NoNewPrivs": "1", "Seccomp": "2",
			"socket": "operation not permitted", "exec": "fork/exec /bin/true: operation not permitted", "fork": "operation not permitted"}
		if ns == userNamespaces {
			// Root in its own user namespace, which maps the server's user alone.
			want["uid"], want["gid"], want["uid_map"] = "0", "0", "0 65532 1"
		}
		for k, w := range want {
			if r[k] != w {
				t.Errorf("%s: %q, want %q", k, r[k], w)
			}
		}
		if f := foreign(t, r["fds"]); len(f) > 0 {
			t.Errorf("the worker has descriptors it did not open: %v", f)
		}
		// The chart's RuntimeDefault profile may be there already; ours is one more.
		if n, err := strconv.Atoi(r["Seccomp_filters"]); err != nil || n < 1 {
			t.Errorf("Seccomp_filters: %q", r["Seccomp_filters"])
		}
		own := []string{"mnt", "pid", "net", "ipc", "uts"}
		if ns == userNamespaces {
			own = append(own, "user")
		}
		if ns == noNamespaces {
			own = nil
			for _, n := range []string{"mnt", "pid", "net", "user"} {
				if r["ns-"+n] != parent["ns-"+n] {
					t.Errorf("without namespaces, the worker's %s namespace is %s, not the server's %s", n, r["ns-"+n], parent["ns-"+n])
				}
			}
			return
		}
		// Root, or root in its own user namespace, empties the bounding set too (a server of
		// another user without one cannot: it lacks CAP_SETPCAP).
		if r["CapBnd"] != "0000000000000000" {
			t.Errorf("CapBnd: %q, want 0000000000000000 (the bounding set emptied)", r["CapBnd"])
		}
		for _, n := range own {
			if r["ns-"+n] == "" || r["ns-"+n] == parent["ns-"+n] {
				t.Errorf("the worker shares the server's %s namespace (%s)", n, r["ns-"+n])
			}
		}
		if r["etc"] != "0 <nil>" || r["pid"] != "1" {
			t.Errorf("/etc: %s entries, pid %s: want an empty /etc and pid 1 of its own /proc", r["etc"], r["pid"])
		}
		if hostsName != "" && r["resolves"] != "false" {
			t.Errorf("the worker resolves %s from the server's /etc/hosts", hostsName)
		}
	}
	t.Run("root", func(t *testing.T) {
		s := newSandbox(t, Config{})
		if !s.IsolatesNetwork() || s.InUserNamespace() {
			t.Fatal("as root, the worker got no namespaces, or a user namespace it does not need")
		}
		got, err := run(t, s, t.Context(), job{Op: "report", Name: hostsName})
		if err != nil {
			t.Fatal(err)
		}
		check(t, got, rootNamespaces)
	})
	// The test binary, where that user can run it; it starts a server as 65532, which starts the
	// worker.
	asUser := func(t *testing.T, args ...string) string {
		dir, err := os.MkdirTemp("", "sandbox-as-user")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		bin := filepath.Join(dir, "sandbox.test")
		b, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, b, 0o755); err != nil || os.Chmod(dir, 0o755) != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(t.Context(), bin, args...)
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65532, Gid: 65532, Groups: []uint32{}}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	t.Run("uid 65532", func(t *testing.T) {
		if got := asUser(t, "try-user-namespace"); got != "ok" {
			t.Skipf("this kernel gives uid 65532 no user namespace (%s); the next subtest holds the sandbox without one", got)
		}
		check(t, asUser(t, "report-as", hostsName), userNamespaces)
	})
	t.Run("uid 65532, user namespaces refused", func(t *testing.T) {
		check(t, asUser(t, "report-as", hostsName, "confined"), noNamespaces)
	})
}

// userNamespaceAllowed says whether this process may make a user namespace: it starts /bin/true
// in one. TestWorkerPrivileges runs it as uid 65532 ("try-user-namespace").
func userNamespaceAllowed() error {
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}},
	}
	return cmd.Run()
}

// refuseUserNamespaces installs on this process the part of a container runtime's default
// seccomp profile (Docker's, containerd's RuntimeDefault) that matters here: a process without
// CAP_SYS_ADMIN may not clone or unshare a new user namespace (EPERM), and clone3, whose flags a
// filter cannot read, answers ENOSYS so that callers fall back to clone.
func refuseUserNamespaces() error {
	const cloneNewUser = syscall.CLONE_NEWUSER
	return seccomp.LoadFilter(seccomp.Filter{NoNewPrivs: true, Flag: seccomp.FilterFlagTSync, Policy: seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Action: seccomp.ActionErrno, NamesWithCondtions: []seccomp.NameWithConditions{
				{Name: "clone", Conditions: []seccomp.Condition{{Argument: 0, Operation: seccomp.BitsSet, Value: cloneNewUser}}},
				{Name: "unshare", Conditions: []seccomp.Condition{{Argument: 0, Operation: seccomp.BitsSet, Value: cloneNewUser}}},
			}},
			{Action: errnoENOSYS, Names: []string{"clone3"}},
		},
	}})
}

// TestNoNetwork: as root, the worker has a network namespace of its own and reaches nothing,
// not even the server's loopback; without the namespace, the same job connects.
func TestNoNetwork(t *testing.T) {
	if os.Geteuid() != 0 {
		// Not a skip: without root, New must say it cannot isolate the network.
		if newSandbox(t, Config{}).IsolatesNetwork() {
			t.Fatal("not root, yet the sandbox says it isolates the network")
		}
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	isolated := newSandbox(t, Config{})
	if !isolated.IsolatesNetwork() {
		t.Fatal("root, yet no network namespace")
	}
	if got, err := run(t, isolated, t.Context(), job{Op: "dial", Name: ln.Addr().String()}); err != nil || !strings.HasPrefix(got, "error") {
		t.Fatalf("isolated worker: %q %v", got, err)
	}
	// In the server's network namespace, the seccomp filter still refuses the socket.
	shared := newSandbox(t, Config{NoNetworkNamespace: true})
	if shared.IsolatesNetwork() {
		t.Fatal("NoNetworkNamespace, yet the sandbox says it isolates the network")
	}
	if got, err := run(t, shared, t.Context(), job{Op: "dial", Name: ln.Addr().String()}); err != nil || !strings.Contains(got, "operation not permitted") {
		t.Fatalf("worker in the server's namespace: %q %v", got, err)
	}
	// The same dial from here connects: the listener is there.
	if c, err := net.DialTimeout("tcp", ln.Addr().String(), 10*time.Second); err != nil {
		t.Fatal(err)
	} else {
		c.Close()
	}
}

// TestWorkerThatDoesNotStart: New says so.
func TestWorkerThatDoesNotStart(t *testing.T) {
	_, err := New(t.Context(), Config{Command: []string{"/nonexistent/sidecarlab", "worker"}})
	if err == nil || !strings.Contains(err.Error(), "does not start") {
		t.Fatalf("err %v", err)
	}
}

// TestOutputBound: a worker that answers more than MaxOutput is not read (an *OutputError, which
// the engine's isolator makes a 422 worded in the catalogs); one just under it is read whole.
func TestOutputBound(t *testing.T) {
	const max = 64 << 10
	s := newSandbox(t, Config{MaxOutput: max})
	var a answer
	err := s.Run(t.Context(), job{Op: "write", Bytes: max}, &a)
	var oe *OutputError
	if !errors.As(err, &oe) || oe.Max != max {
		t.Fatalf("an answer over the bound: %v", err)
	}
	if err := s.Run(t.Context(), job{Op: "write", Bytes: max - 100}, &a); err != nil || len(a.Value) != max-100 {
		t.Fatalf("an answer under the bound: %v, %d bytes", err, len(a.Value))
	}
	for _, explained := range []bool{false, true} {
		ie := outputTooLarge(1<<20, explained)
		if got := wording.English.InputText(ie); got != ie.Text() || !strings.Contains(got, "1 MiB") {
			t.Fatalf("the English catalog says\n%q\nthe isolator says\n%q", got, ie.Text())
		}
		if strings.Contains(ie.Text(), "explanation") != explained {
			t.Errorf("explained %v: %q", explained, ie.Text())
		}
		if !ie.Lasting {
			t.Error("an answer over the bound is not lasting: the engine would start a worker for it again on every request")
		}
	}
}

// TestOutOfMemory: the three ways the Go runtime dies at the memory limit read as the limit; another
// death (a panic, a nil dereference) does not.
func TestOutOfMemory(t *testing.T) {
	for out, want := range map[string]bool{
		"fatal error: runtime: out of memory\n\ngoroutine 1 [running]:":                            true,
		"runtime: cannot allocate memory\nfatal error: runtime: cannot allocate memory\n":          true,
		"panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV": false,
		"panic: boom\n\ngoroutine 1 [running]:":                                                    false,
		"runtime/cgo: pthread_create failed: Resource temporarily unavailable\nSIGABRT: abort\n":   true,
		"SIGSEGV: segmentation violation\nPC=0x4a2f1c m=0 sigcode=1\n":                             false,
	} {
		if got := outOfMemory(out); got != want {
			t.Errorf("outOfMemory(%q) = %t, want %t", out, got, want)
		}
	}
}

// TestWhy: the reason a worker died is its runtime's first line that says one, not the last line
// of the dump after it (a register, "gs 0x0", was all an internal error's log said).
func TestWhy(t *testing.T) {
	for out, want := range map[string]string{
		"panic: boom\n\ngoroutine 1 [running]:\nmain.main()":                                  "panic: boom",
		"fatal error: newosproc\n\ngoroutine 1 [running]:":                                    "fatal error: newosproc",
		"runtime/cgo: pthread_create failed: EAGAIN\nSIGABRT: abort\nPC=0x1\nrax 0x0\ngs 0x0": "runtime/cgo: pthread_create failed: EAGAIN",
		"SIGSEGV: segmentation violation\nPC=0x1 m=0 sigcode=1\n\nrax 0x0\ngs 0x0":            "SIGSEGV: segmentation violation",
		"worker: --cpu-seconds and --memory-bytes are required\n":                             "worker: --cpu-seconds and --memory-bytes are required",
	} {
		if got := why(out); got != want {
			t.Errorf("why(%q) = %q, want %q", out, got, want)
		}
	}
}

// TestHardenOffTheMainThread: harden refuses to run on a thread other than the main one, where
// it would drop one thread's privileges and check another's; it changes nothing then.
func TestHardenOffTheMainThread(t *testing.T) {
	errc := make(chan error, 1)
	var off func()
	off = func() {
		runtime.LockOSThread() // the goroutine keeps this thread, and the thread dies with it
		if syscall.Gettid() == os.Getpid() {
			// The main thread, held by this goroutine: the next one runs on another.
			done := make(chan struct{})
			go func() { off(); close(done) }()
			<-done
			runtime.UnlockOSThread()
			return
		}
		errc <- harden(noNamespaces)
	}
	go off()
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "not on the main thread") {
		t.Fatalf("harden off the main thread: %v", err)
	}
}
