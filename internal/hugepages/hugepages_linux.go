package hugepages

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// region is how much of the heap is advised: the ~12 MB that `version` or `inject` of one file
// fill at their peak, and `serve`'s engine start, with room.
const region = 32 << 20

// advised is the region prepare advised at start, for Settle: written once, by init's
// goroutine, hence atomic.
var advised atomic.Pointer[[2]uintptr]

func init() {
	godebug, _ := syscall.Getenv("GODEBUG")
	if !wanted(readSmall("/sys/kernel/mm/transparent_hugepage/enabled"), godebug) {
		return
	}
	go func() {
		if start, end, err := prepare(); err == nil {
			advised.Store(&[2]uintptr{start, end})
		}
	}()
}

// wanted says whether advising helps: only when the kernel gives huge pages to the memory that
// asks for them (the bracketed choice of transparent_hugepage/enabled is "madvise") and the Go
// runtime's own switch for them (GODEBUG=disablethp=1, the last setting winning, as the runtime
// reads it) is not on. It parses by hand: the strings package would wait, in Go's
// initialisation order, for unicode's tables, after the libraries this package must precede.
func wanted(enabled, godebug string) bool {
	const choice, key = "[madvise]", "disablethp="
	found := false
	for i := 0; i+len(choice) <= len(enabled); i++ {
		if enabled[i:i+len(choice)] == choice {
			found = true
			break
		}
	}
	if !found {
		return false
	}
	disabled := false
	for rest := godebug; rest != ""; {
		setting := rest
		rest = ""
		for i := 0; i < len(setting); i++ {
			if setting[i] == ',' {
				setting, rest = setting[:i], setting[i+1:]
				break
			}
		}
		if len(setting) >= len(key) && setting[:len(key)] == key {
			disabled = setting[len(key):] == "1"
		}
	}
	return !disabled
}

// prepare allocates the region, advises it and collects it, so that the allocations that come
// next reuse it, and returns its address range (for tests), or the error of madvise. The
// runtime maps heap memory as it grows and a new mapping does not keep an earlier advice, so
// the memory must be the heap's own: a live object's, freed at once by a collection of a heap
// that is still tiny.
func prepare() (start, end uintptr, err error) {
	b := make([]byte, region)
	start = uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	end = start + uintptr(len(b))
	err = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
	runtime.GC()
	return start, end, err
}

// Settle withdraws the advice for a process that goes on running once started (serve), and
// says whether there was one: then the caller should return the free heap to the kernel
// (runtime/debug.FreeOSMemory; not called here, as runtime/debug would put this package's
// initialisation after the libraries'), which splits the huge pages it had back into 4 KB
// ones. Huge pages make a start cheap, but a server's steady work slower on the virtual machines
// measured (BENCHMARKS.md: −10 % requests a second with them kept, the same as without once
// settled).
func Settle() bool {
	r := advised.Load()
	if r == nil {
		return false
	}
	return unadvise(r[0], r[1]) == nil
}

// unadvise withdraws MADV_HUGEPAGE from [start, end).
func unadvise(start, end uintptr) error {
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, start, end-start, syscall.MADV_NOHUGEPAGE); e != 0 {
		return e
	}
	return nil
}

// readSmall reads a small file, such as a sysfs setting, with syscall alone (see the package
// doc for why not os), or returns "" when it cannot.
func readSmall(path string) string {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	defer syscall.Close(fd)
	var buf [128]byte
	n, err := syscall.Read(fd, buf[:])
	if err != nil || n <= 0 {
		return ""
	}
	return string(buf[:n])
}
