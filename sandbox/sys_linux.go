package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// init keeps a worker's main goroutine on the main thread (LockOSThread in init does), where
// Serve hardens it: prctl and capset change the calling thread alone, and /proc/self/status,
// which harden and its tests read, is the main thread's. Under load the runtime moved the
// goroutine to another thread, which left the main thread's bounding set full (CI, TestWorkerPrivileges).
func init() {
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		runtime.LockOSThread()
	}
}

const limitsSupported = true

// sysProcAttr has the worker killed if the server dies first and, with namespaces, starts it in
// namespaces of its own: network (it reaches nothing, not even the server's loopback), mount
// (harden hides /etc and mounts a /proc of its own), PID (it sees no other process), IPC, UTS.
// A server that is not root makes them inside a user namespace of the worker's own
// (userNamespaces), where the kernel allows an unprivileged user one: the server's user and group
// are its only ones, mapped to 0 inside, so that it may make its mounts before harden drops every
// capability it has there.
func sysProcAttr(ns namespaces) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if ns == noNamespaces {
		return a
	}
	a.Cloneflags = syscall.CLONE_NEWNET | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS
	if ns == userNamespaces {
		a.Cloneflags |= syscall.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
	return a
}

// workerID is the user and group a worker started as root becomes: the chart's (65532,
// distroless's "nonroot"), which owns nothing on the server.
const workerID = 65532

// giveToWorker hands a worker's temporary directory (Run makes one per worker) to the user the
// worker becomes: workerID when the server is root (harden makes it that user), the server's own
// user otherwise, which owns it already.
func giveToWorker(dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	return os.Chown(dir, workerID, workerID)
}

const (
	prSetPdeathsig  = 1
	prCapbsetDrop   = 24
	prSetNoNewPrivs = 38
)

// harden sheds what the worker was started with, before it reads its job:
//   - in namespaces of its own (ns), its mounts are made private, an empty read-only tmpfs
//     covers /etc (a template's getHostByName must not read the server's /etc/hosts) and a
//     /proc of its PID namespace covers the server's;
//   - started as root, it empties its capability bounding set (dropBoundingSet) and becomes
//     workerID with no supplementary groups, which leaves it no capabilities (and the
//     parent-death signal, which the kernel clears then, is set again);
//   - in a user namespace of its own (a server that is not root), it is root there only, with
//     the server's user outside and every capability of that namespace: it empties the bounding
//     set and then its capabilities (dropCapabilities). It cannot become another user: the
//     server's is the only one its namespace maps;
//   - no_new_privs, so nothing it could exec gains any.
//
// It fails, and the worker with it, when any capability is left: a sandbox that keeps
// privileges it cannot drop refuses to run templates (sandbox.New says why).
func harden(ns namespaces) error {
	// The bounding set, the capabilities and the parent-death signal are a thread's: harden runs
	// on the process's main thread (init), whose /proc/self/status the checks read, or not at all.
	if syscall.Gettid() != os.Getpid() {
		return errors.New("not on the main thread: start the worker as PROGRAM worker (init keeps it there)")
	}
	if ns != noNamespaces {
		if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
			return fmt.Errorf("make the mounts private: %w", err)
		}
		if err := syscall.Mount("tmpfs", "/etc", "tmpfs", syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "size=4k,mode=0555"); err != nil {
			return fmt.Errorf("hide /etc: %w", err)
		}
		if err := syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
			return fmt.Errorf("mount /proc: %w", err)
		}
	}
	if ns == userNamespaces {
		if err := dropBoundingSet(); err != nil {
			return err
		}
		if err := dropCapabilities(); err != nil {
			return err
		}
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetPdeathsig, uintptr(syscall.SIGKILL), 0); e != 0 {
			return fmt.Errorf("parent-death signal: %w", e)
		}
	} else if os.Geteuid() == 0 || os.Getegid() == 0 {
		if err := dropBoundingSet(); err != nil {
			return err
		}
		if err := syscall.Setgroups(nil); err != nil {
			return fmt.Errorf("drop the groups: %w", err)
		}
		if err := syscall.Setgid(workerID); err != nil {
			return fmt.Errorf("drop root's group: %w", err)
		}
		if err := syscall.Setuid(workerID); err != nil {
			return fmt.Errorf("drop root: %w", err)
		}
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetPdeathsig, uintptr(syscall.SIGKILL), 0); e != 0 {
			return fmt.Errorf("parent-death signal: %w", e)
		}
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0); e != 0 {
		return fmt.Errorf("no_new_privs: %w", e)
	}
	st, err := procStatus()
	if err != nil {
		return err
	}
	for _, f := range []string{"CapEff", "CapPrm", "CapAmb"} {
		if v := strings.TrimLeft(st[f], "0"); v != "" {
			return fmt.Errorf("the worker keeps privileges it cannot drop (%s %s): custom templates are refused here; run the server as root or as an unprivileged user without capabilities", f, st[f])
		}
	}
	return nil
}

// dropBoundingSet empties the capability bounding set (CapBnd), which setuid leaves full: the
// capabilities the process could ever gain again, through an execve of a file with capabilities
// or of a set-user-ID root program. no_new_privs and the seccomp filter (no execve) already
// close that door; an empty bounding set closes it as well, and shows that nothing is left. It
// needs CAP_SETPCAP, so it runs as root, before the setuid (and before the seccomp filter, which
// is installed last). The capabilities are 0 through the kernel's cap_last_cap (this kernel's,
// not a count this program was built with). A non-root server cannot drop them (no CAP_SETPCAP);
// its worker has no capabilities to gain back anyway, with no_new_privs and no execve.
func dropBoundingSet() error {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return fmt.Errorf("the capability bounding set: %w", err)
	}
	last, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("the capability bounding set: cap_last_cap %q: %w", b, err)
	}
	for c := 0; c <= last; c++ {
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prCapbsetDrop, uintptr(c), 0); e != 0 {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, e)
		}
	}
	return nil
}

// dropCapabilities empties the effective, permitted and inheritable capability sets (capset(2),
// version 3: two 32-bit words each); the ambient set empties with the permitted one.
func dropCapabilities() error {
	hdr := struct {
		version uint32
		pid     int32
	}{version: 0x20080522} // _LINUX_CAPABILITY_VERSION_3
	var data [2]struct{ effective, permitted, inheritable uint32 }
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("drop the capabilities: %w", e)
	}
	return nil
}

// procStatus is /proc/self/status as fields: "CapEff" → "0000000000000000".
func procStatus() (map[string]string, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m, nil
}

// closeOnExec marks every descriptor of this process above stderr close-on-exec, so that a
// worker gets only what Run gives it (stdin, stdout, stderr and the answer pipe). Go's own are
// already; this catches those the process inherited open.
func closeOnExec() {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	for _, n := range names {
		if fd, err := strconv.Atoi(n); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

// setLimits sets the worker's own limits, once it runs:
//   - CPU time: at the soft limit the kernel sends SIGXCPU, and the worker says so on stderr
//     (cpuLimitLine) and exits; one second later, at the hard limit, the kernel kills it if it
//     could not (diedOf tells the two apart from other deaths).
//   - Memory: RLIMIT_AS at what the process has mapped now plus MemoryBytes. It counts every
//     mapping, Go's PROT_NONE heap reservations too, so one huge allocation fails as it reserves.
//     RLIMIT_DATA alone does not hold a Go process: the kernel charges a mapping placed over a
//     reservation only after checking it, so a single 1 GiB allocation passes a 256 MiB limit.
//     Set at start, RLIMIT_AS would stop the Go runtime from starting; set now, it is relative to
//     what the runtime already took. RLIMIT_DATA is set as well, for whatever it catches.
func setLimits(l Limits) error {
	xcpu := make(chan os.Signal, 1)
	signal.Notify(xcpu, syscall.SIGXCPU)
	go func() {
		<-xcpu
		fmt.Fprintln(os.Stderr, cpuLimitLine)
		os.Exit(3)
	}()
	cpu := uint64(l.CPUSeconds)
	if err := syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: cpu, Max: cpu + 1}); err != nil {
		return err
	}
	mem := uint64(l.MemoryBytes)
	if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: mem, Max: mem}); err != nil {
		return err
	}
	vm, err := mappedBytes()
	if err != nil {
		return err
	}
	as := vm + mem
	return syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: as, Max: as})
}

// mappedBytes is this process's virtual size (VmSize in /proc/self/status).
func mappedBytes() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmSize:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmSize in /proc/self/status")
}
