package diff

import (
	"strings"

	"istio.io/istio/tools/istio-iptables/pkg/constants"
)

// iptablesFlagNames are istio-iptables' one-letter flags with their long names, as Istio binds them
// (tools/istio-iptables/pkg/cmd/root.go, bindCmdlineFlags, in the pinned Istio); the long names are
// Istio's own constants. The template writes the short forms.
var iptablesFlagNames = map[string]string{
	"-p": constants.EnvoyPort,
	"-z": constants.InboundCapturePort,
	"-e": constants.InboundTunnelPort,
	"-u": constants.ProxyUID,
	"-g": constants.ProxyGID,
	"-m": constants.InboundInterceptionMode,
	"-b": constants.InboundPorts,
	"-d": constants.LocalExcludePorts,
	"-c": constants.ExcludeInterfaces,
	"-i": constants.ServiceCidr,
	"-x": constants.ServiceExcludeCidr,
	"-q": constants.OutboundPorts,
	"-o": constants.LocalOutboundPortsExclude,
	"-k": constants.RerouteVirtualInterfaces,
	"-t": constants.InboundTProxyMark,
	"-r": constants.InboundTProxyRouteTable,
	"-n": constants.DryRun,
}

// IptablesFlagName is the long name of an istio-iptables flag as written in its args ("-o" →
// "istio-local-outbound-ports-exclude", "--redirect-dns" → "redirect-dns", "--x=y" → "x").
func IptablesFlagName(flag string) string {
	if n, ok := iptablesFlagNames[flag]; ok {
		return n
	}
	n, _, _ := strings.Cut(strings.TrimLeft(flag, "-"), "=")
	return n
}

// iptablesFlag is one flag of an istio-iptables command line: its value, or, for a flag written
// alone (a boolean such as --redirect-dns), bare.
type iptablesFlag struct {
	flag, value string
	bare        bool
}

// parseIptablesArgs reads an istio-iptables command line (args[0] is "istio-iptables") as flags,
// in order. It returns false for anything else, or for a line it cannot read as flags without
// guessing (a positional argument, a flag given twice): those are diffed element by element.
func parseIptablesArgs(l []any) ([]iptablesFlag, bool) {
	if len(l) == 0 || l[0] != "istio-iptables" {
		return nil, false
	}
	args := make([]string, len(l)-1)
	for i, e := range l[1:] {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		args[i] = s
	}
	var out []iptablesFlag
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			return nil, false
		}
		f := iptablesFlag{flag: a}
		switch {
		case strings.HasPrefix(a, "--") && strings.Contains(a, "="):
			f.flag, f.value, _ = strings.Cut(a, "=")
		case i+1 < len(args) && !strings.HasPrefix(args[i+1], "-"):
			f.value = args[i+1]
			i++
		default:
			f.bare = true
		}
		if seen[f.flag] {
			return nil, false
		}
		seen[f.flag] = true
		out = append(out, f)
	}
	return out, true
}

// diffIptablesArgs diffs two istio-iptables command lines flag by flag: "-o 3306,6379" added is one
// change at args[-o] with the value 3306,6379 and the flag's long name, not two positional
// insertions. Order is not compared (the flags are parsed by name). It returns false when either
// side is not such a command line.
func diffIptablesArgs(path string, a, b []any, out *[]Change) bool {
	fa, ok := parseIptablesArgs(a)
	if !ok {
		return false
	}
	fb, ok := parseIptablesArgs(b)
	if !ok {
		return false
	}
	value := func(f iptablesFlag) any {
		if f.bare {
			return true
		}
		return f.value
	}
	before := make(map[string]iptablesFlag, len(fa))
	for _, f := range fa {
		before[f.flag] = f
	}
	after := make(map[string]bool, len(fb))
	for _, f := range fb {
		after[f.flag] = true
	}
	for _, f := range fa {
		if !after[f.flag] {
			*out = append(*out, Change{Path: path + "[" + f.flag + "]", Kind: Removed, Old: value(f), Flag: f.flag, FlagName: IptablesFlagName(f.flag)})
		}
	}
	for _, f := range fb {
		c := Change{Path: path + "[" + f.flag + "]", New: value(f), Flag: f.flag, FlagName: IptablesFlagName(f.flag)}
		switch old, ok := before[f.flag]; {
		case !ok:
			c.Kind = Added
		case old != f:
			c.Kind, c.Old = Changed, value(old)
		default:
			continue
		}
		*out = append(*out, c)
	}
	return true
}
