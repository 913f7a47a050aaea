package web

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
	// WhyState is the state, encoded, that the field diff's why buttons send (form why-form)
	// with their step, document and path: once on the page, not on every row.
	WhyState  string
	Documents []DocView
	Warnings  []string
	Findings  []FindingView
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
	// UpgradeHref previews the upgrade of the state's own mesh to the embedded Istio, labelled
	// UpgradeLabel; empty without a mesh.
	UpgradeHref, UpgradeLabel string
	// DevImage says whose the embedded Istio's proxy image is (a development build's), when the
	// selected step's output has it; empty otherwise.
	DevImage string
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
	// Ambient is whether the Pod joins ambient once it runs, in words (nil: the installation
	// has no ambient and nothing asks for it); RunTime what happens then.
	Ambient *AmbientView
}

// AmbientView is a Pod's ambient enrolment: Joins, the sentence that says by which rule (a
// catalog message, `code` quoted), and what happens at run time to a Pod that joins.
type AmbientView struct {
	Joins   bool
	Rule    string
	Text    string
	RunTime []string
}

// TraceLine is one rule of the trace, in words.
type TraceLine struct {
	ID, Text string
	// Quote is the part of Text that is Kubernetes' or Istio's own message, verbatim (English in
	// every language).
	Quote string
}

// WebhookRow is one webhook the installation registers, and whether the API server calls it.
type WebhookRow struct {
	Configuration, Name                 string
	NamespaceSelector, ObjectSelector   string
	NamespaceMatch, ObjectMatch, Called bool
}

// SettingsFix is a fix that changes the settings (a namespace label, an install option): the
// words, and the value its button posts (the handlers apply it to the posted settings). Label is
// the namespace label a label fix sets. A fix that cannot apply in the user's mode (Instead: an
// install option under a mesh that gives its own values) has no button: its words say what to do
// in the installation instead, and Preview links to the mesh upgraded with it.
type SettingsFix struct {
	ID, Value, Label, Text string
	Instead                bool
	Preview                string
}

// CompareLink is a one-click comparison of this state with a variant.
type CompareLink struct {
	Label, Href string
}

// FindingView is one pitfall with its one-click fix.
type FindingView struct {
	Severity, Check, Doc, Path, Message string
	// Quote is the part of Message that is Istio's own words, verbatim (its catalog's
	// description: English in every language).
	Quote   string
	FixText string
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
	// Phases draws the start and the stop as two diagrams (presenter mode: a slide each, so that
	// each fits a screen at a size a room reads) instead of one.
	Phases bool
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
	// Nodes is the node count the ztunnel share is on, with its field in the chooser (up to
	// MaxNodes); 0 when the installation has no ztunnel, and no field.
	Nodes, MaxNodes int
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
	// NoteIstio says Note is Istio's own words, verbatim (English in every language).
	NoteIstio bool
	// Prose says Text is words (the pitfalls' summaries), set in the page's font with room to
	// wrap, not a value in the code font.
	Prose bool
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
	// DefaultConfig says which fields this step's proxy.istio.io/config sets to what the mesh
	// config's defaultConfig already gives: why the step changes less than it sets.
	DefaultConfig string
	Changes       []ChangeView
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
	// CutYAML, when set, is how much of the injected YAML is shown (its documents' share of the
	// page: a List of many objects is one document).
	CutYAML string
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
