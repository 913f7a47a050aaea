// Command etcd is etcd's own server (etcdmain), built here for sidecarlab's test control plane.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
