//go:build !linux

package sandbox

import (
	"errors"
	"syscall"
)

const limitsSupported = false

func sysProcAttr(bool) *syscall.SysProcAttr { return nil }

func setLimits(Limits) error { return errors.New("not supported on this system") }

func closeOnExec() {}

func harden(bool) error { return errors.New("not supported on this system") }

func lockDown() error { return errors.New("not supported on this system") }
