package sandbox

import (
	"fmt"
	"slices"
	"syscall"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
)

// workerSyscalls are the system calls a worker makes once it runs its job: Go's runtime
// (memory, threads, signals, timers, the netpoller), reading its job and writing its answer,
// /proc/self/status, the temporary files an install's overlay is read through, and a cgo
// build's libc. Names this architecture does not have are left out. Everything else fails with
// EPERM: no socket (no network, even where the worker shares the server's network namespace),
// no execve, no new process (clone only with CLONE_THREAD), no kill, no ptrace, no mount, no
// ioctl. The list was taken from strace of the workers of the isolated tests
// (handlers, sandbox), and Go's and glibc's thread start-up; the tests fail on a missing one.
var workerSyscalls = []string{
	// Files and descriptors.
	"read", "write", "readv", "writev", "pread64", "pwrite64", "lseek", "close", "openat", "open",
	"fstat", "newfstatat", "stat", "lstat", "statx", "fstatfs", "fcntl", "getdents64", "readlinkat",
	"readlink", "unlinkat", "unlink", "mkdirat", "faccessat", "faccessat2", "access", "fsync",
	"fdatasync", "ftruncate", "dup", "dup3", "pipe2",
	// Memory.
	"mmap", "munmap", "mprotect", "madvise", "mremap", "brk",
	// Threads, scheduling, time.
	"futex", "set_robust_list", "rseq", "set_tid_address", "sched_yield", "sched_getaffinity",
	"gettid", "getpid", "getppid", "tgkill", "tkill", "exit", "exit_group", "nanosleep",
	"clock_nanosleep", "clock_gettime", "clock_getres", "gettimeofday", "time", "restart_syscall",
	"arch_prctl", "prctl",
	// Signals.
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack",
	// The netpoller.
	"epoll_create1", "epoll_create", "epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2",
	"eventfd2", "poll", "ppoll", "pselect6", "select",
	// Who and what it is.
	"getrandom", "prlimit64", "getrlimit", "uname", "getuid", "geteuid", "getgid", "getegid",
	"getgroups", "getrusage", "sysinfo", "getcwd",
}

// cloneThread is CLONE_THREAD: a clone that makes a thread of this process, not a new one.
const cloneThread = 0x10000

// errnoENOSYS answers clone3, whose flags a filter cannot read (they are in memory): glibc then
// starts its threads with clone, which the filter can read. Go's runtime uses clone.
const errnoENOSYS = seccomp.ActionErrno | seccomp.Action(syscall.ENOSYS)

// workerPolicy is the filter every worker installs on itself.
func workerPolicy() (seccomp.Policy, error) {
	info, err := arch.GetInfo("")
	if err != nil {
		return seccomp.Policy{}, err
	}
	names := slices.DeleteFunc(slices.Clone(workerSyscalls), func(n string) bool { _, ok := info.SyscallNames[n]; return !ok })
	return seccomp.Policy{
		DefaultAction: seccomp.ActionErrno, // EPERM
		Syscalls: []seccomp.SyscallGroup{
			{Action: seccomp.ActionAllow, Names: names},
			{Action: seccomp.ActionAllow, NamesWithCondtions: []seccomp.NameWithConditions{{
				Name:       "clone",
				Conditions: []seccomp.Condition{{Argument: 0, Operation: seccomp.BitsSet, Value: cloneThread}},
			}}},
			{Action: errnoENOSYS, Names: []string{"clone3"}},
		},
	}, nil
}

// lockDown installs workerPolicy on every thread of the worker (TSYNC), after no_new_privs.
func lockDown() error {
	p, err := workerPolicy()
	if err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	if err := seccomp.LoadFilter(seccomp.Filter{NoNewPrivs: true, Flag: seccomp.FilterFlagTSync, Policy: p}); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}
