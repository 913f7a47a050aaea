package main

import (
	"github.com/spf13/cobra"

	"github.com/sidecarlab/sidecarlab/sandbox"
)

// newWorkerCmd is the hidden `worker`: the isolated worker serve starts for untrusted templates
// (package sandbox), which reads its own flags.
func newWorkerCmd(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:                "worker",
		Short:              c.T("cli.worker.short"),
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return sandbox.EngineWorker(c.ctx, args, c.stdin)
		},
	}
}
