package web

// AmbientPage is a sidecar-or-ambient comparison: each workload with the ambient profile's
// sidecar beside itself in ambient, and what the two data planes ask of the cluster.
type AmbientPage struct {
	Head    Head
	Version VersionLine
	Lab     LabNav
	// State is the compared state, encoded (the node count's form sends it again); Back is its
	// permalink in the playground.
	State, Back string
	// Install is the sidecar side's install options (--set paths).
	Install string
	// SidecarLabel and AmbientLabel name the two sides.
	SidecarLabel, AmbientLabel string
	Nodes, MaxNodes            int
	Workloads                  []AmbientWorkloadView
	Capacity                   AmbientCapacityView
	// Presenting is the view's presenter mode.
	Presenting Presenting
}

// AmbientWorkloadView is one workload of the comparison.
type AmbientWorkloadView struct {
	Doc   string
	Error string
	// NotInjected is Istio's reason when the sidecar side was not injected.
	NotInjected string
	// Joins and Enrolment say whether the pod joins ambient and by which rule; RunTime what
	// happens then. InjectLabel: the pod's sidecar.istio.io/inject=true label gets it a sidecar
	// in an ambient namespace all the same.
	Joins       bool
	Enrolment   string
	RunTime     []string
	InjectLabel bool
	// Changes are the fields moving to ambient takes out (sidecar → ambient).
	Changes                            []ChangeView
	SidecarLifecycle, AmbientLifecycle *LifecycleView
	// Facts are what ambient's run time means for the pod's lifecycle.
	Facts                  []string
	SidecarPSA, AmbientPSA []PSAView
	Annotations            []AmbientRowView
	// Sidecar and Ambient are the two sides' YAML.
	Sidecar, Ambient string
}

// PSAView is Pod Security Admission's verdict at one level: its message when it forbids.
type PSAView struct {
	Level      string
	Allowed    bool
	Violations []string
}

// AmbientRowView is what ambient does with one annotation: the verdict (an id and its words),
// why, where ambient serves the need instead, and the sources that show it.
type AmbientRowView struct {
	Annotation, Verdict, Text, Why string
	Where, Sources                 []string
}

// AmbientCapacityView is the capacity of the two data planes: the sidecars' requests over every
// pod, ztunnel's per node and on every node, and a waypoint's; each "cpu=… memory=…".
type AmbientCapacityView struct {
	Nodes, Pods                           int
	Sidecars, Ztunnel, Ztunnels, Waypoint string
	HasZtunnel                            bool
}
