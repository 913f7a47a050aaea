package api

// Cluster is GET /api/v1/cluster's answer: the server's cluster's Istio revisions (each with its
// tags) and its namespaces with their labels; More says there are more namespaces than those
// listed.
type Cluster struct {
	Revisions  []Revision  `json:"revisions"`
	Namespaces []Namespace `json:"namespaces"`
	More       bool        `json:"more,omitempty"`
}

// Revision is an Istio revision of the cluster and the tags that point at it.
type Revision struct {
	Name string   `json:"name"`
	Tags []string `json:"tags,omitempty"`
}

// Namespace is a namespace of the cluster and its labels.
type Namespace struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
}
