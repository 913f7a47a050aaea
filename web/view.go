package web

import (
	"context"
	"strings"

	"github.com/a-h/templ"

	"github.com/sidecarlab/sidecarlab/i18n"
)

// DefaultTab is the tab a link shows when it names none: the first of Tabs.
const DefaultTab = "diff"

// Tabs are the results' tabs, in order (the page's 1–9 keys follow it).
func Tabs() []Tab {
	return []Tab{{ID: DefaultTab}, {ID: "unified"}, {ID: "yaml"}, {ID: "timeline"}, {ID: "pitfalls"},
		{ID: "lifecycle"}, {ID: "batch"}, {ID: "warnings"}, {ID: ClusterTab}}
}

// ClusterTab is the Cluster view's tab: the admission path of each workload's Pod. It costs an
// admission, so its panel is rendered only on a page that shows it (see Results.Lazy).
const ClusterTab = "cluster"

// Tab is one results tab. Its id is language-free (links, panels); its title is worded.
type Tab struct {
	ID string
}

// Title is the tab's name in the request's language (results.tab.ID).
func (t Tab) Title(ctx context.Context) string { return t.In(i18n.FromContext(ctx)) }

// In is the tab's name in l's language.
func (t Tab) In(l *i18n.Localizer) string { return l.T("results.tab." + t.ID) }

// ColumnTitle is a batch table column's heading in the request's language, by the engine's
// column name (engine.BatchColumn.Name, which the page's data-col keeps): "proxy first" and
// "PROXY_CONFIG" are results.batch.col.proxy-first and results.batch.col.proxy-config. The
// downloads (CSV, Markdown, JSON) keep the engine's English names: they are data.
func ColumnTitle(ctx context.Context, column string) string {
	id := strings.ToLower(strings.NewReplacer(" ", "-", "_", "-").Replace(column))
	return T(ctx, "results.batch.col."+id)
}

// Page is the playground page.
type Page struct {
	// Head is the page's <title> and Open Graph tags.
	Head Head
	// Version is the Istio inside, for the header and footer.
	Version VersionLine
	// Permalink is the path and query of this exact view.
	Permalink string
	// Banner is a notice above everything (a link made under another Istio, an unreadable link).
	Banner  string
	Form    Form
	Presets []PresetOption
	Modes   []Option
	// Cluster is what the server's own cluster offers (serve --cluster-read), nil for none.
	Cluster *ClusterChoices
	// Panel is the annotation panel's catalog part, rendered once (see AnnotationGroups).
	Panel templ.Component
	// Search is the annotation panel's search box; with a query, Panel holds only the matches.
	Search AnnotationSearch
	// Active are the annotations the timeline sets, in the order first set.
	Active  []ActiveAnnotation
	Results Results
	// TabLinks are the links to each tab of this view.
	TabLinks []TabLink
	// Lab is the lab's guided path, each step a permalink, with this view's place on it.
	Lab LabNav
	// Held are the keys of the kept regions (the diff tab's steps, the lab strip, the settings)
	// the page already shows, in a fragment its script asked for: such a region is sent as an empty
	// placeholder the script fills with its own copy (see Kept).
	Held map[string]bool
	// Sharing is on when the server stores links; ShortLink is this view's, when it has one.
	Sharing   bool
	ShortLink string
	// Present is presenter mode; Slides are its navigation.
	Present bool
	Slides  Slides
	// Room is the page's place in a room (nil: none, and no room to start).
	Room *Room
	// PresentHref and EmbedHref open this view in presenter and embed mode.
	PresentHref, EmbedHref string
	// EmbedSnippet is the <iframe> element (as text) that embeds this view in another page.
	EmbedSnippet string
	// Outcome says, for an answer that is not OK, what the page script's status line says (its
	// words page.js.<Outcome>): OutcomeRejected (or its YAML and schema kinds), OutcomeEmpty,
	// OutcomeRefused or OutcomeNamespace. Empty for an answer that is OK.
	Outcome string
}

// The outcomes of a view that is not OK (Page.Outcome).
const (
	// OutcomeRejected: Istio rejected documents, marked in the editor; OutcomeRejectedYAML:
	// documents that are not YAML, and no other error; OutcomeRejectedSchema: documents that are
	// YAML but not what Kubernetes reads as their kind (and no error of Istio's).
	OutcomeRejected       = "rejected"
	OutcomeRejectedYAML   = "rejectedYAML"
	OutcomeRejectedSchema = "rejectedSchema"
	// OutcomeEmpty: the manifest is empty, or only blank: nothing to inject, and what to paste.
	OutcomeEmpty = "empty"
	// OutcomeRefused: the request was refused as a whole (an annotation value, an install
	// option, a limit); its error is in the results.
	OutcomeRefused = "refused"
	// OutcomeNamespace: the namespace in the settings could not be read.
	OutcomeNamespace = "namespaceError"
)

// Slides is the presenter's navigation through the timeline.
type Slides struct {
	Current, Count int
	// Lifecycle is the last slide: the lifecycle view of the last step, after the steps' diffs.
	Lifecycle bool
	PrevHref  string
	NextHref  string
	ExitHref  string
}

// LabStep is one step of the lab's path.
type LabStep struct {
	N           int
	Title, Href string
	// Current marks the step whose state this view shows.
	Current bool
}

// LabNav is the lab's path as a page shows it: every step, the current one (0: the view is not
// a step of the lab) with what to look for there, and the steps before and after it.
type LabNav struct {
	Steps   []LabStep
	Current int
	// Left is the step the view went on from with annotations of the learner's own (0: none,
	// or the view is a step): the strip keeps that step's context and links back to it.
	Left int
	// Look is what to look for at the current step, in two or three sentences; Lines name the
	// template lines its annotation switches, a sentence per template.
	Look  string
	Lines []string
	// Why explains more at a step that needs it (the Job's: why classic here), with a link that
	// shows it (Switch; zero when none).
	Why        string
	Switch     LabStep
	Prev, Next LabStep // zero when there is none
	// ApplyToMine offers the lab's annotation steps on the manifest in the editor.
	ApplyToMine bool
	// Body is the strip's inside rendered (RenderLabStrip), when the caller keeps it; empty,
	// LabStrip renders it.
	Body Kept
}

// TabLink is a tab with the URL that selects it.
type TabLink struct {
	Tab
	Href     string
	Selected bool
	Count    int // a badge (pitfalls; warnings and rejected documents), 0 for none
}

// Form is the state as the form shows it.
type Form struct {
	Manifest          string
	StepsJSON         string
	Mode              string
	KubernetesVersion string
	Set               string // one --set path per line
	Overlay           string
	// Mesh is the mesh of the user's own the state injects with (its compacted texts and
	// revision, as JSON, carried in a hidden field; "" for none): its revision, and the embedded
	// Istio's release when its templates are that Istio's ("" when they are its own).
	// MeshConfigMaps is a paste not yet read. MeshOtherIstio is the Istio that installed the
	// mesh when it is not the embedded one's release line ("" when the same, or unknown).
	Mesh, MeshRevision, MeshIstioTemplates, MeshOtherIstio, MeshConfigMaps string
	// MeshEmbedded are the parts of the mesh it did not give, which are the embedded Istio's
	// (engine.OwnMesh.Embedded). MeshInstalledBy is the Istio that installed it, as its
	// ConfigMaps say ("" when they do not).
	MeshEmbedded    []string
	MeshInstalledBy string
	Tab             string
	Step            int
	// ErrorLine and ErrorMsg mark the manifest editor (0: no mark); ErrorText is the error under
	// it, with its place (document and line) worded as every place in the input is.
	ErrorLine int
	// ErrorColumn is where on ErrorLine the mark starts (1-based; 0: the whole line).
	ErrorColumn int
	ErrorMsg    string
	ErrorText   string
	// Cols are the batch table's chosen columns, carried through the form's actions (nil: the
	// default ones).
	Cols []string
	// Nodes is the batch table's node count, carried through the form's actions (0: the default).
	Nodes int
	// Namespace is the settings' namespace group.
	Namespace NamespaceForm
	// Marks are the pitfalls found on lines of the manifest; MarksJSON is the same for the
	// editor's script ("[]" for none).
	Marks     []Mark
	MarksJSON string
}

// NamespaceForm is the namespace the Cluster view creates Pods in, as the settings show it: the
// labels the quick toggles stand for (istio-injection=enabled, istio.io/rev, Pod Security's
// enforce level), and the other labels as KEY=VALUE lines.
type NamespaceForm struct {
	Name      string
	Injection bool
	Rev       string
	Enforce   string
	Labels    string
	// Enforces are the enforce level's choices (the first, empty, is "not set").
	Enforces []Option
	// Error is what is wrong with what was typed, naming the field (empty when nothing is).
	Error string
}

// ClusterChoices are the server's cluster's Istio revisions (a setting: inject with that
// revision's mesh, read when the form is applied) and its namespaces (the Cluster tab's
// namespace, its labels read when applied), or why they could not be listed.
type ClusterChoices struct {
	Revisions, Namespaces []Option
	// More says the cluster has more namespaces than the Count listed.
	More  bool
	Count int
	Error string
}

// Mark is a pitfall on a line of the manifest, as the editor marks it.
type Mark struct {
	Line     int    `json:"line"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	// Quote is the part of Message that is Istio's own words, verbatim (FindingView.Quote).
	Quote string `json:"quote,omitempty"`
}

// PitfallBanner announces the pitfalls above the results, where the eye is: how many, the
// first one's gist, and the link that opens the Pitfalls tab.
type PitfallBanner struct {
	Count      int
	Gist, Href string
	// Quote is the part of Gist that is Istio's own words, verbatim (FindingView.Quote).
	Quote       string
	MoreThanOne bool
}

// Option is a choice in a select.
type Option struct {
	Value, Label string
	Selected     bool
}

// PresetOption is a preset in the menu.
type PresetOption struct {
	ID, Title string
}

// AnnotationGroup is one section of the annotation panel.
type AnnotationGroup struct {
	Name  string
	Items []AnnotationItem
	// Open is true when the section starts expanded.
	Open bool
}

// ActiveAnnotation is an annotation the timeline has set, with its value.
type ActiveAnnotation struct {
	Key, Value string
}

// AnnotationItem is one annotation in the panel with the input it gets.
type AnnotationItem struct {
	// Name is the annotation's key; Description, FeatureStatus ("Alpha", "Beta"…) and
	// Deprecated are Istio's catalog entry; Kind is the value's kind ("bool", "quantity"…).
	Name, Description, FeatureStatus, Kind string
	Deprecated                             bool
	// Summary is the id of sidecarlab's own summary of the annotation in the catalogs (the lab's
	// annotations have one), shown in the reader's language beside Istio's description; "" for none.
	Summary string
	// Field is the form field of its value; Input is "select", "textarea" or "text".
	Field string
	Input string
	// Options for a select (bool and enum kinds).
	Options []Option
	Value   string
	// Search is what the panel's search box matches, lower case: the key, the description and
	// the words of every language that lead to it (handlers' searchText). The page's script
	// matches the same text (data-search), and so does the server for ?q=.
	Search string
	// ConfigFields is the typed editor of proxy.istio.io/config: one row per field of Istio's
	// ProxyConfig schema (empty for every other annotation).
	ConfigFields []ConfigField
}

// ConfigField is one ProxyConfig field in the proxy.istio.io/config editor: its JSON name, its
// proto type and doc (from Istio's proxy.proto), and the input its kind gets.
type ConfigField struct {
	Name, Kind, Type string
	// Doc is the field's doc comment from proxy.proto, read for the page (ParseDoc).
	Doc FieldDoc
	// Field is the form field of its value ("pc:concurrency"); Input is "select", "number",
	// "textarea" or "text".
	Field, Input string
	Options      []Option
	Value        string
	Placeholder  string
}

// AnnotationSearch is the panel's search: the words typed (empty: the whole catalog), and
// whether anything matched them.
type AnnotationSearch struct {
	Query   string
	NoMatch bool
}
