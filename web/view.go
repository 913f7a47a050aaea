// Package web holds the playground's templ components and the view models they render. View
// models are shaped like the page; the components only display them.
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
// column name (engine.BatchColumns, which the page's data-col keeps): "proxy first" and
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
	// PresentHref and EmbedHref open this view in presenter and embed mode.
	PresentHref, EmbedHref string
	// EmbedSnippet is the <iframe> element (as text) that embeds this view in another page.
	EmbedSnippet string
	// Outcome says, for an answer that is not OK, what the page script's status line says (its
	// words page.js.<Outcome>): OutcomeRejected, OutcomeEmpty, OutcomeRefused or
	// OutcomeNamespace. Empty for an answer that is OK.
	Outcome string
}

// The outcomes of a view that is not OK (Page.Outcome).
const (
	// OutcomeRejected: Istio (or its YAML reader) rejected documents, marked in the editor.
	OutcomeRejected = "rejected"
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
	// None: the state has no step, so there is nothing to step through.
	None     bool
	PrevHref string
	NextHref string
	ExitHref string
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
	// Look is what to look for at the current step, in two or three sentences.
	Look string
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
	Tab                                                                    string
	Step                                                                   int
	// ErrorLine and ErrorMsg mark the manifest editor (0: no mark).
	ErrorLine int
	ErrorMsg  string
	// Cols are the batch table's chosen columns, carried through the form's actions (nil: the
	// default ones).
	Cols []string
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
}

// PitfallBanner announces the pitfalls above the results, where the eye is: how many, the
// first one's gist, and the link that opens the Pitfalls tab.
type PitfallBanner struct {
	Count       int
	Gist, Href  string
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

// Results is everything right of the editor.
type Results struct {
	// Error is a problem with the request as a whole (nothing was injected), or empty;
	// ErrorDetails the parser's own text of it, when Error says it in words.
	Error, ErrorDetails string
	Tab                 string
	// OnlySelected renders only the selected tab's content (a fragment).
	OnlySelected bool
	// Selected is the step whose output, warnings and documents are shown; All means the field
	// and unified diffs show every step.
	Selected int
	All      bool
	Steps    []StepView
	Output   string
	// DownloadHref downloads Output as a file.
	DownloadHref string
	Documents    []DocView
	Warnings     []string
	Findings     []FindingView
	// Ignored says how many of the last step's findings the manifest opted out of; empty for none.
	Ignored string
	// Banner is shown when Findings is not empty.
	Banner     PitfallBanner
	Lifecycles []LifecycleView
	Batch      BatchView
	// Compare are the one-click comparisons of this view with a variant; none when none applies.
	Compare []CompareLink
	// DocErrors counts the selected step's rejected documents, all of them (Documents may be
	// only the first ones, see More).
	DocErrors int
	More      More
	// Lazy are the tabs whose panel is rendered only when selected, even on a full page: what
	// they show costs an admission (the Cluster tab; the batch table with its admission column).
	// The page's script fetches them when chosen, as it does for a fragment's other tabs.
	Lazy []string
	// Cluster is the Cluster tab's content, made only when it is shown.
	Cluster ClusterView
}

// ClusterView is each workload's way through the cluster's admission: the namespace, then per
// document the verdicts, the trace, Pod Security's messages and the webhooks.
type ClusterView struct {
	// Namespace is the namespace and its labels in words; Version the Kubernetes version.
	Namespace, Version string
	Docs               []ClusterDoc
	// Fixes are the fixes that change the settings (one click each), for every document.
	Fixes []SettingsFix
	// Hidden counts the documents not shown (a large manifest); MoreHref shows more of them.
	Hidden   int
	MoreHref string
	// Error is why there is no admission (the manifest failed; the settings are wrong).
	Error string
	// CheckedKubernetes and CheckedIstio are the versions of the real cluster these answers are
	// held to in sidecarlab's tests.
	CheckedKubernetes, CheckedIstio string
}

// ClusterDoc is one document's admission.
type ClusterDoc struct {
	Doc                int
	Kind, Name         string
	Injected, Admitted bool
	// Pod is the Pod's name as created, or its generateName; PodNote says which part of it
	// stands for what the controller or the API server would put there.
	Pod, PodNote string
	// Namespace is the namespace the Pod is created in.
	Namespace string
	Trace     []TraceLine
	// Violations are Pod Security Admission's messages (and a webhook's refusal), verbatim;
	// Warnings its warn-level ones.
	Violations, Warnings []string
	Webhooks             []WebhookRow
	// Lifecycle is the admitted Pod's start and stop order (nil when it is not admitted).
	Lifecycle *LifecycleView
	// Error says why this document has no Pod (a kind that makes none, a failed document).
	Error string
}

// TraceLine is one rule of the trace, in words.
type TraceLine struct {
	ID, Text string
}

// WebhookRow is one webhook the installation registers, and whether the API server calls it.
type WebhookRow struct {
	Configuration, Name                 string
	NamespaceSelector, ObjectSelector   string
	NamespaceMatch, ObjectMatch, Called bool
}

// SettingsFix is a fix that changes the settings (a namespace label, an install option): the
// words, and the id its button posts (the handlers apply it to the posted settings).
type SettingsFix struct {
	ID, Text string
}

// CompareLink is a one-click comparison of this state with a variant.
type CompareLink struct {
	Label, Href string
}

// FindingView is one pitfall with its one-click fix.
type FindingView struct {
	Severity, Check, Doc, Path, Message string
	FixText                             string
	// FixSteps is the JSON of the steps the fix adds (the value of the fix button); empty when
	// the fix is text only.
	FixSteps string
}

// LifecycleView is one workload's start and stop sequence.
type LifecycleView struct {
	Title    string
	Ready    string
	Verdicts []VerdictView
	// Sequence is what the diagram draws (laid out by layOut, beside the drawing).
	Sequence Sequence
	Start    []string
	Stop     []string
	Capacity CapacityView
}

// VerdictView is one answered question. Goodness ("good", "bad", "neutral") is what the page
// colours by: "yes" is bad for the startup race and good for a Job that completes.
type VerdictView struct {
	// Answer is "yes", "no" or "n/a"; AnswerText says it in the page's language.
	ID, Question, Answer, Why string
	AnswerText                string
	Goodness                  string
}

// CapacityView is istio-proxy's resources for one pod and for all of them.
type CapacityView struct {
	Known bool
	// Recount shows the pod-count input (the playground's form; not on the compare page).
	Recount                    bool
	PerPodRequests             string
	PerPodLimits               string
	Replicas                   int
	ReplicasFromSpec           bool
	TotalRequests, TotalLimits string
}

// BatchView is the batch table: the chosen columns after the workload's, a row per workload, the
// totals as the last row, and the column chooser.
type BatchView struct {
	Columns                         []string
	Rows                            []BatchRowView
	Total                           string
	CSVHref, MarkdownHref, JSONHref string
	// Chosen says the link chose the columns: the CSV and Markdown downloads have those (with no
	// choice they have every column), the JSON every field.
	Chosen bool
	// Choices are every optional column, Shown or not. The chooser is a GET form of this view:
	// Keep are its query as hidden fields; DefaultHref is the view with the default columns.
	Choices     []BatchChoice
	Keep        []Hidden
	DefaultHref string
}

// BatchRowView is one workload: its name and kind (the row's header), then a cell per column.
type BatchRowView struct {
	// Doc is the workload's document (1-based).
	Doc        int
	Name, Kind string
	Cells      []BatchCell
}

// BatchCell is a cell's value and a note under it (the result's reason).
type BatchCell struct {
	Text, Note string
}

// BatchChoice is a column the chooser offers, by its id in the link's cols=, and its engine
// column name (its title is ColumnTitle's).
type BatchChoice struct {
	ID, Column string
	Shown      bool
}

// Hidden is a hidden form field.
type Hidden struct {
	Name, Value string
}

// StepView is one row of the timeline.
type StepView struct {
	Index int
	// Title is "Injection (the manifest as pasted)" for row 0, else the step ("key=value" or
	// "remove key").
	Title string
	// Cause names what the changes are attributed to: the step, or, when its value is long, the
	// step's key and number (the value is not repeated on every change).
	Cause string
	// Value is the step's whole value when the title shows only a preview of it: the timeline
	// shows it, the one place it is shown in full.
	Value string
	// Replaces says which proxy.istio.io/config fields this step's value no longer sets: a step
	// replaces the annotation's whole value (empty when nothing is dropped).
	Replaces string
	Changes  []ChangeView
	// Serializer are the changes of row 0 that injection did not make: kube-inject's serializer
	// writes them (empty defaults such as status: {}); they are shown apart, folded.
	Serializer []ChangeView
	// Injected counts the documents Istio injected in this step.
	Injected int
	// Notes say what happened to each document that was not simply injected.
	Notes      []DocNote
	Unified    []DiffLine
	Href       string // selects this step
	Selected   bool
	RemoveStep int // the step index to remove, 0 for row 0
	Errors     int
	// Open is whether the step's changes start expanded (row 0 folds once there are steps).
	Open bool
	// HiddenChanges and HiddenLines count the changes (of Changes and Serializer) and unified
	// diff lines this step has beyond what the page shows (see More).
	HiddenChanges, HiddenLines int
	// ChangeCount is how many changes injection or the step made, shown or not; SerializerCount
	// how many of the serializer's the page shows. The headings of the field and unified diffs
	// say both, so both are set for either tab, whether or not its rows are made (Changes and
	// Serializer are only for the field diff).
	ChangeCount, SerializerCount int
	// Failed says a document failed and the page shows none of injection's changes: the heading
	// says the step failed instead of counting.
	Failed bool
	// Body is the diff tab's step rendered (RenderStepBody), when the caller keeps it with the
	// row; empty, the tab renders it.
	Body Kept
}

// More says that a page shows only part of a large result — the first Shown of Total documents,
// and at most a number of changes and diff lines per step — with the link that shows more and
// the raw outputs, which always have everything.
type More struct {
	// Truncated says the page shows part of the result: Partial, some of its documents, changes
	// or diff lines, or CutLines, some lines cut short.
	Truncated, Partial bool
	Shown, Total       int
	// MaxChanges and MaxLines are the most changes and unified diff lines a step shows.
	MaxChanges, MaxLines int
	// Href is this view showing more documents; Step is how many more.
	Href string
	Step int
	// InjectedHref and DiffHref are the raw injected YAML and the diff of the whole timeline.
	InjectedHref, DiffHref string
	// CutLines counts the lines of output or diff cut for being over MaxLine bytes (a long value).
	CutLines, MaxLine int
}

// ChangeView is one field change.
type ChangeView struct {
	// Anchor is the change's deep link fragment, "step=N&doc=D&path=…" (handlers' deepLink says
	// which parts a page's links have); LinkLabel names it for a screen reader.
	Anchor, LinkLabel string
	// DocIndex is the change's document, from 1: its row's data-doc, which a deep link's doc= names.
	DocIndex int
	// Kind is "added", "removed", "changed" or "moved"; KindText says it in words. The words
	// are made with the row, which is memoised per language, not on every render.
	Kind, KindText string
	Sign           string
	Doc            string
	Path           string
	Old            Value
	New            Value
	// Flag is set for one flag of istio-iptables' command line ("-o"), with FlagMeaning saying
	// what it does; Old and New are then the flag as written ("-o 3306,6379").
	Flag, FlagMeaning string
	// Moved says where a moved entry came from: "moved from PATH" or "moved from position N to M".
	Moved string
}

// Value is a changed value as shown: one line, or YAML lines in a block, folded when long.
type Value struct {
	Text string
	// Block is set for YAML lines (Lines of them); Fold when they start folded. Name is the
	// element's name, for the folded summary.
	Block, Fold bool
	Lines       int
	Name        string
	// Summary is what a folded value shows: its name, if it has one, and its length.
	Summary string
	// Note says how the value is shown when it is not as written ("JSON in a string, shown as YAML").
	Note string
}

// DocNote says what happened to a document that was not simply injected (rejected, skipped, a
// kind Istio does not inject), with Istio's own message in Detail.
type DocNote struct {
	Doc          int
	Status       string
	Text, Detail string
	// DetailLang is "en" when Detail is Istio's own text (empty: the page's language).
	DetailLang string
	// Parser is the parser's (or Istio's) own text of an error, shown behind a "details" toggle
	// when Detail says it in words.
	Parser string
}

// DiffLine is one line of a unified diff.
type DiffLine struct {
	Kind string // "add", "del", "hunk", "ctx", "file"
	Text string
}

// DocView summarises one document of the selected step.
type DocView struct {
	Index      int
	Line       int
	Kind, Name string
	Status     string // "injected", "skipped", "passed through", "error"
	// StatusText is Status in words; Reason says why, in ReasonLang ("en" for Istio's own text,
	// empty for the page's language).
	StatusText         string
	Reason, ReasonLang string
}

// ComparePage shows one state beside a variant of it.
type ComparePage struct {
	Head    Head
	Version VersionLine
	// Lab is the lab's path (the Job two ways is one of its steps).
	Lab  LabNav
	A, B CompareSide
	// Changes is the field diff from A's output to B's.
	Changes []ChangeView
	// Documents say, for a manifest of several documents, which changed and how much.
	Documents []CompareDoc
	// Upgrade is the plan of an upgrade preview (A: the user's mesh, B: the embedded Istio with
	// its settings carried), nil for any other comparison.
	Upgrade *UpgradePlanView
}

// CompareDoc is one document of a comparison and how many of its fields changed.
type CompareDoc struct {
	Doc     string
	Changes int
}

// UpgradePlanView is how an upgrade preview carried the mesh's settings, as a form that previews
// again with other keys: the old state (encoded), each values key that differs from the embedded
// chart's defaults, and the mesh config's fields the embedded Istio does not know.
type UpgradePlanView struct {
	State    string
	Embedded string
	// OldIstio is set when the old side's templates are not the embedded Istio's: the Istio that
	// installed them ("?" when their labels do not say).
	OldIstio    string
	Keys        []UpgradeKeyView
	MeshUnknown []string
}

// UpgradeKeyView is one values key of an upgrade preview: the mesh's value and the embedded
// chart's default, as JSON.
type UpgradeKeyView struct {
	Path, Yours, Default string
	Carried, Unknown     bool
}

// CompareSide is one of the two states.
type CompareSide struct {
	Label      string
	Permalink  string
	Error      string
	Lifecycles []LifecycleView
	Output     string
	// OnlyHere are the pitfalls this side has and the other has not.
	OnlyHere []string
	// Namespace is the namespace the Pods are created in, with its labels; Admission each
	// document's verdict there (Istio's webhooks, then Pod Security Admission).
	Namespace string
	Admission []CompareVerdict
}

// CompareVerdict is a document's Pod as the API server admits it: the document, admitted or
// not, and Pod Security's (or the webhook's) words when not.
type CompareVerdict struct {
	Doc      string
	Admitted bool
	Why      []string
}
