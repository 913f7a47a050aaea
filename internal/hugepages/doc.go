// Package hugepages makes the process start cheaper on Linux, where most of its start is page
// faults: it asks the kernel for transparent huge pages for the first 32 MB of the Go heap.
//
// The package initialisation of the libraries the injector needs (Istio's, Kubernetes's, the
// protobuf registries) fills ~12 MB of heap, and `serve`'s engine start more; in 4 KB pages that
// is ~3,000 separate page faults, a third of `sidecarlab version`'s wall time on a virtual
// machine. The Go runtime does not ask for huge pages for its heap, so where the kernel gives
// them only to memory that asks (transparent_hugepage "madvise", the default of most
// distributions) this package asks for it: it allocates 32 MB, advises MADV_HUGEPAGE on it and
// collects it at once, so that the heap the initialisation goes on to fill is that advised
// memory. Under "always" the heap has huge pages already, and under "never" asking is in vain:
// then, or with the runtime's own GODEBUG=disablethp=1, it does nothing. The cost is memory in
// 2 MB steps instead of 4 KB ones, within those 32 MB.
//
// A process that goes on running once started calls Settle: on the virtual machines measured,
// the huge pages that make the start cheap make a server's requests ~10 % slower, and settled
// (the advice withdrawn, the free heap returned, which splits them) they cost nothing.
//
// main imports it for its init alone. It depends on nothing but the runtime, syscall and
// sync/atomic, so that Go's initialisation order (import paths sorted, dependencies first) runs
// it before the libraries whose initialisation fills the heap; cmd/sidecarlab's
// TestHugePagesInitFirst holds that. The work runs beside the initialisation, in a goroutine:
// the init itself costs ~0.2 ms.
package hugepages
