//go:build !linux

package hugepages

// Settle does nothing where the package asks for nothing (see the Linux one).
func Settle() bool { return false }
