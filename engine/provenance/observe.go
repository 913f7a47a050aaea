package provenance

import (
	"strconv"
	"sync"
	"text/template"
	"text/template/parse"
)

// observeFunc is the function an observed template calls first: it is given the template's name
// and its data, and writes nothing.
const observeFunc = "sidecarlabProvenanceObserve"

// Run is one run of a template by Istio: the template's name and the data Istio gave it (an
// inject.SidecarTemplateData, which Istio builds from its own unexported parameters).
type Run struct {
	Template string
	Data     any
}

// Observer keeps the runs of the templates it observes, in the order Istio runs them.
type Observer struct {
	mu   sync.Mutex
	runs []Run
}

// Reset forgets the runs so far, for the observer to watch again.
func (o *Observer) Reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.runs = o.runs[:0]
}

// Runs are the runs so far.
func (o *Observer) Runs() []Run {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]Run(nil), o.runs...)
}

// Observe is ts with each template made to call the observer first, with its data: Istio runs
// them as it runs ts, and writes the same bytes (the call writes nothing). ts is not changed.
func Observe(ts map[string]*template.Template) (map[string]*template.Template, *Observer, error) {
	o := &Observer{}
	fn := func(name string, data any) string {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.runs = append(o.runs, Run{Template: name, Data: data})
		return ""
	}
	out := make(map[string]*template.Template, len(ts))
	for name, t := range ts {
		if t.Tree == nil || t.Tree.Root == nil {
			out[name] = t
			continue
		}
		c, err := t.Clone()
		if err != nil {
			return nil, nil, err
		}
		call, err := parse.Parse("observe", "{{"+observeFunc+" "+strconv.Quote(name)+" .}}", "{{", "}}", map[string]any{observeFunc: fn})
		if err != nil {
			return nil, nil, err
		}
		// A new root before the same nodes: Istio's tree is shared, never changed, and not
		// copied whole for each object observed.
		tree, root := *c.Tree, *c.Tree.Root
		root.Nodes = append([]parse.Node{call["observe"].Root.Nodes[0]}, c.Tree.Root.Nodes...)
		tree.Root = &root
		c.Funcs(template.FuncMap{observeFunc: fn})
		if _, err := c.AddParseTree(c.Name(), &tree); err != nil {
			return nil, nil, err
		}
		out[name] = c
	}
	return out, o, nil
}
