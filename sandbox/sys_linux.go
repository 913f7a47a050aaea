package sandbox

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

const limitsSupported = true

// sysProcAttr starts the worker in a network namespace of its own when netns is set, and has it
// killed if the server dies first.
func sysProcAttr(netns bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if netns {
		a.Cloneflags = syscall.CLONE_NEWNET
	}
	return a
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
//   - CPU time: the kernel kills the worker at the hard limit (Go ignores SIGXCPU, so soft and
//     hard are the same).
//   - Memory: RLIMIT_AS at what the process has mapped now plus MemoryBytes. It counts every
//     mapping, Go's PROT_NONE heap reservations too, so one huge allocation fails as it reserves.
//     RLIMIT_DATA alone does not hold a Go process: the kernel charges a mapping placed over a
//     reservation only after checking it, so a single 1 GiB allocation passes a 256 MiB limit.
//     Set at start, RLIMIT_AS would stop the Go runtime from starting; set now, it is relative to
//     what the runtime already took. RLIMIT_DATA is set as well, for whatever it catches.
func setLimits(l Limits) error {
	cpu := uint64(l.CPUSeconds)
	if err := syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: cpu, Max: cpu}); err != nil {
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
