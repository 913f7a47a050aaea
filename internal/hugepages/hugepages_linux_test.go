package hugepages

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestWanted(t *testing.T) {
	const madvise, always, never = "always [madvise] never\n", "[always] madvise never\n", "always madvise [never]\n"
	for _, tc := range []struct {
		enabled, godebug string
		want             bool
	}{
		{madvise, "", true},
		{madvise, "http2client=0", true},
		{madvise, "disablethp=0", true},
		{madvise, "disablethp=1", false},
		{madvise, "gctrace=1,disablethp=1", false},
		{madvise, "gctrace=1, disablethp=1", true}, // the runtime does not trim: not its setting
		{madvise, "disablethp=1,disablethp=0", true},
		{always, "", false},
		{never, "", false},
		{"", "", false}, // no THP in the kernel: no file
	} {
		if got := wanted(tc.enabled, tc.godebug); got != tc.want {
			t.Errorf("wanted(%q, %q) = %v, want %v", tc.enabled, tc.godebug, got, tc.want)
		}
	}
}

// TestPrepareAdvisesTheHeap: the memory prepare hands back to the heap carries the kernel's
// huge page flag ("hg" in /proc/self/smaps), which the binary's own memory does not.
func TestPrepareAdvisesTheHeap(t *testing.T) {
	start, end, err := prepare()
	if err != nil {
		t.Fatalf("madvise: %v", err)
	}
	if end-start != region {
		t.Fatalf("prepared %d bytes, want %d", end-start, region)
	}
	if flags := vmFlags(t, start, end); !allHave(flags, "hg") {
		t.Errorf("the prepared heap's mappings have flags %q, want hg in each", flags)
	}
	// Settled, the advice is gone (the huge pages split when the free heap goes back, which the
	// caller of Settle does).
	if err := unadvise(start, end); err != nil {
		t.Fatalf("madvise: %v", err)
	}
	if flags := vmFlags(t, start, end); len(flags) == 0 || anyHas(flags, "hg") {
		t.Errorf("the settled heap's mappings have flags %q, want none with hg", flags)
	}
	// The check itself, on memory never advised: a variable of the binary.
	data := uintptr(unsafe.Pointer(&heapFlagsProbe))
	if flags := vmFlags(t, data, data+1); len(flags) == 0 || allHave(flags, "hg") {
		t.Errorf("the binary's data has flags %q, want mappings without hg", flags)
	}
}

// TestSettle: Settle withdraws the advice from the region init's goroutine advised, and says
// so; with none advised it says there was none.
func TestSettle(t *testing.T) {
	saved := advised.Load()
	t.Cleanup(func() { advised.Store(saved) })
	advised.Store(nil)
	if Settle() {
		t.Error("Settle() = true with nothing advised")
	}
	start, end, err := prepare()
	if err != nil {
		t.Fatalf("madvise: %v", err)
	}
	advised.Store(&[2]uintptr{start, end})
	if !Settle() {
		t.Fatal("Settle() = false with a region advised")
	}
	if flags := vmFlags(t, start, end); len(flags) == 0 || anyHas(flags, "hg") {
		t.Errorf("the settled heap's mappings have flags %q, want none with hg", flags)
	}
}

var heapFlagsProbe [64]byte

// vmFlags returns the VmFlags of every mapping of this process that overlaps [start, end).
func vmFlags(t *testing.T, start, end uintptr) []string {
	t.Helper()
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	overlaps := false
	for line := range strings.SplitSeq(string(smaps), "\n") {
		if from, to, ok := mappingRange(line); ok {
			overlaps = from < end && start < to
			continue
		}
		if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok && overlaps {
			flags = append(flags, strings.TrimSpace(rest))
		}
	}
	return flags
}

// mappingRange reads a mapping's header line of smaps ("7f00-7f80 rw-p ..."), if line is one.
func mappingRange(line string) (from, to uintptr, ok bool) {
	addrs, _, found := strings.Cut(line, " ")
	lo, hi, dash := strings.Cut(addrs, "-")
	if !found || !dash {
		return 0, 0, false
	}
	a, err1 := strconv.ParseUint(lo, 16, 64)
	b, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uintptr(a), uintptr(b), true
}

func allHave(flags []string, flag string) bool {
	for _, f := range flags {
		if !strings.Contains(" "+f+" ", " "+flag+" ") {
			return false
		}
	}
	return len(flags) > 0
}

func anyHas(flags []string, flag string) bool {
	for _, f := range flags {
		if strings.Contains(" "+f+" ", " "+flag+" ") {
			return true
		}
	}
	return false
}
