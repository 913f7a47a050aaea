//go:build !linux

package sandbox

import (
	"errors"
	"syscall"
)

const limitsSupported = false

func sysProcAttr(namespaces) *syscall.SysProcAttr { return nil }

func setLimits(Limits) error { return errors.New("not supported on this system") }

func closeOnExec() {}

func giveToWorker(string) error { return nil }

func harden(namespaces) error { return errors.New("not supported on this system") }

func lockDown() error { return errors.New("not supported on this system") }
