// sidecarlab's few lines of JavaScript. The page works without them (every action is a form POST
// answered by a redirect to a permalink); with them, the manifest gets a CodeMirror editor, and
// actions swap in only the parts of the page that changed.
import { EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection } from "@codemirror/view";
import { EditorState } from "@codemirror/state";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { syntaxHighlighting, HighlightStyle, indentOnInput, bracketMatching } from "@codemirror/language";
import { tags } from "@lezer/highlight";
import { yaml } from "@codemirror/lang-yaml";
import { lintGutter, setDiagnostics } from "@codemirror/lint";

document.documentElement.classList.add("js");

let editor = null;

// The script's words, in the page's language: the server renders them from its catalogs
// (page.js.*) into a JSON island, <script type="application/json" id="i18n-js">, read once here.
// A word with a run-time value keeps the catalog's placeholder, {{.Name}}, which t() fills:
// t("noLink", { Error: why }). A word the island lacks shows its key, never a crash.
const words = (() => {
  try { return JSON.parse(document.getElementById("i18n-js")?.textContent || "{}"); } catch { return {}; }
})();

function t(key, values) {
  let s = typeof words[key] === "string" ? words[key] : key;
  for (const [name, value] of Object.entries(values || {})) s = s.split("{{." + name + "}}").join(String(value));
  return s;
}

// YAML colours come from the stylesheet's variables, so light and dark themes both read well.
const yamlColours = HighlightStyle.define([
  { tag: [tags.propertyName, tags.definition(tags.propertyName)], color: "var(--hl-key)" },
  { tag: [tags.string, tags.special(tags.string), tags.content], color: "var(--hl-string)" },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: "var(--hl-literal)" },
  { tag: [tags.comment, tags.lineComment, tags.blockComment], color: "var(--muted)", fontStyle: "italic" },
  { tag: [tags.meta, tags.separator, tags.punctuation, tags.operator, tags.squareBracket, tags.brace], color: "var(--muted)" },
  { tag: [tags.labelName, tags.typeName], color: "var(--hl-anchor)" },
]);

function manifestArea() {
  return document.getElementById("manifest");
}

// Tab in the editor: by default it moves focus like everywhere else on the page (CodeMirror's
// tab-focus mode), so a keyboard user is never trapped. Ctrl+M (⌥⇧M on a Mac) opts in to Tab
// indenting; then Esc followed by Tab still leaves the editor. The hint under the editor (its
// accessible description) and the ? list say so, and say it again when the mode changes.
const tabKeys = {
  focus: t("tabFocus"),
  indent: t("tabIndent"),
};

let tabIndents = false;

function toggleTab(view) {
  tabIndents = !tabIndents;
  view.setTabFocusMode(!tabIndents);
  const indent = tabIndents;
  const hint = document.getElementById("editor-keys");
  if (hint) hint.textContent = indent ? tabKeys.indent : tabKeys.focus;
  setStatus(indent ? t("nowIndents") : t("nowFocus"));
  return true;
}

function enhanceEditor() {
  const ta = manifestArea();
  if (!ta) return;
  const host = document.createElement("div");
  host.className = "cm-host";
  host.dataset.testid = "editor";
  const hint = document.createElement("p");
  hint.id = "editor-keys";
  hint.className = "hint editor-keys";
  hint.dataset.testid = "editor-keys";
  hint.textContent = tabKeys.focus;
  ta.after(host, hint);
  ta.hidden = true;
  editor = new EditorView({
    parent: host,
    state: EditorState.create({
      doc: ta.value,
      extensions: [
        lineNumbers(), highlightActiveLineGutter(), history(), drawSelection(), indentOnInput(),
        syntaxHighlighting(yamlColours), bracketMatching(), highlightActiveLine(),
        yaml(), lintGutter(),
        keymap.of([{ key: "Ctrl-m", mac: "Shift-Alt-m", run: toggleTab }, ...defaultKeymap, ...historyKeymap, indentWithTab]),
        EditorView.updateListener.of((u) => { if (u.docChanged) { ta.value = u.state.doc.toString(); markStale(); } }),
        // tabindex: the content is in the tab order anyway (contenteditable); saying so lets
        // checkers see that the scrolling region around it can be reached by keyboard.
        EditorView.contentAttributes.of({ "aria-label": t("editorLabel"), "aria-describedby": "editor-keys", tabindex: "0" }),
        // The editor's own styles go in a <style> element; the page's CSP admits it by nonce.
        EditorView.cspNonce.of(document.querySelector('meta[name="csp-nonce"]')?.content || ""),
      ],
    }),
  });
  editor.setTabFocusMode(true);
  markError();
}

// markError puts the server's error mark (data-error-line on the textarea) on the editor line.
function markError() {
  const ta = manifestArea();
  if (!editor || !ta) return;
  const n = parseInt(ta.dataset.errorLine || "0", 10);
  const doc = editor.state.doc;
  const diags = [];
  if (n > 0 && n <= doc.lines) {
    const line = doc.line(n);
    // The mark starts at the error's column when the server names one (an unclosed quote's quote).
    const col = parseInt(ta.dataset.errorCol || "0", 10);
    const from = col > 0 && col <= line.length ? line.from + col - 1 : line.from;
    diags.push({ from, to: Math.max(line.to, from), severity: "error", message: ta.dataset.errorMsg || t("error") });
  }
  diags.push(...findingDiagnostics(ta, doc));
  editor.dispatch(setDiagnostics(editor.state, diags));
}

// findingDiagnostics are the server's pitfall marks (data-findings on the textarea: a JSON array
// of {line, severity, message}) as diagnostics on their lines: a gutter marker, the message on
// hover. The same words are listed under the editor for keyboards and screen readers.
function findingDiagnostics(ta, doc) {
  let marks = [];
  try { marks = JSON.parse(ta.dataset.findings || "[]"); } catch { marks = []; }
  if (!Array.isArray(marks)) return [];
  return marks.filter((m) => m.line > 0 && m.line <= doc.lines).map((m) => {
    const line = doc.line(m.line);
    const severity = ["error", "warning", "info"].includes(m.severity) ? m.severity : "warning";
    return { from: line.from, to: line.to, severity, source: "pitfall", message: m.message || t("pitfall") };
  });
}

// applied is the manifest the results on the page were made from (the server's, as the last
// answer carried it); markStale says so above the results when the editor holds another.
let applied = manifestArea()?.value ?? "";

function markStale() {
  const ta = manifestArea();
  const results = document.getElementById("results-body");
  if (!ta || !results) return;
  const stale = ta.value !== applied;
  results.classList.toggle("stale", stale);
  let note = document.getElementById("stale-note");
  if (stale && !note) {
    note = document.createElement("p");
    note.id = "stale-note";
    note.className = "stale-note";
    note.dataset.testid = "stale";
    note.setAttribute("role", "status");
    note.textContent = t("stale");
    results.before(note);
  } else if (!stale && note) {
    note.remove();
  }
}

function setStatus(text) {
  const s = document.getElementById("status");
  if (s) s.textContent = text;
}

// heldRegions are the kept regions the page shows (the diff tab's steps, the lab strip, the
// settings), by the key of their inside (a hash of it): the server sends a region the page holds
// as an empty placeholder (data-keep) to be filled with the page's own copy.
function heldRegions() {
  const held = new Map();
  for (const el of document.querySelectorAll("[data-key]")) held.set(el.dataset.key, el);
  return held;
}

// swapFrom replaces every [data-swap] element by its namesake in the fragment the server sent
// (the regions that change after an action), and brings the editor in line with it. It answers
// false, changing nothing, when the fragment keeps a region the page no longer holds.
function swapFrom(doc) {
  const held = heldRegions();
  const keep = doc.querySelectorAll("[data-keep]");
  for (const ph of keep) if (!held.has(ph.dataset.key)) return false;
  for (const ph of keep) {
    // The server's element (its index, whether it is open) with the page's copy of the body.
    ph.replaceChildren(...held.get(ph.dataset.key).childNodes);
    ph.removeAttribute("data-keep");
  }
  for (const el of document.querySelectorAll("[data-swap]")) {
    const fresh = doc.getElementById(el.id);
    if (fresh) el.replaceWith(document.importNode(fresh, true));
  }
  const ta = manifestArea();
  const freshTA = doc.getElementById("manifest");
  if (ta && freshTA) {
    ta.dataset.errorLine = freshTA.dataset.errorLine || "0";
    ta.dataset.errorCol = freshTA.dataset.errorCol || "0";
    ta.dataset.errorMsg = freshTA.dataset.errorMsg || "";
    ta.dataset.findings = freshTA.dataset.findings || "[]";
    if (freshTA.value !== ta.value) {
      ta.value = freshTA.value;
      if (editor) editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: freshTA.value } });
    }
  }
  const form = document.getElementById("playground");
  const root = doc.getElementById("fragment") || doc.getElementById("playground");
  if (form && root) form.dataset.permalink = root.dataset.permalink;
  if (freshTA) applied = freshTA.value;
  markStale();
  markError();
  highlightDeepLink();
  showShortLink(false);
  joinRoom();
  paginateSlide(slideBack);
  return true;
}

// The room bar (#room-bar, the server's): a learner's page that follows the trainer listens to
// the room's events and, at each move, swaps in the room's page (kept by the server per move);
// a learner on their own is told where the room is; the trainer's page moves the room to every
// view it shows and shows the counts. Without the script, a learner's page reloads itself and the
// trainer moves the room with the bar's button.
let roomStream = null;
let roomStreamURL = "";
let roomFetching = false;
let roomLatest = 0;

function roomBar() {
  const bar = document.getElementById("room-bar");
  return bar && !bar.hidden ? bar : null;
}

function following() {
  return roomBar()?.dataset.role === "following";
}

// joinRoom (again after each swap) listens to the stream the bar names, and moves the room when
// the page is the trainer's.
function joinRoom() {
  const bar = roomBar();
  const url = bar?.dataset.events || "";
  if (url !== roomStreamURL) {
    roomStream?.close();
    roomStream = null;
    roomStreamURL = url;
    if (url && typeof EventSource !== "undefined") {
      roomStream = new EventSource(address(url));
      roomStream.addEventListener("room", (e) => {
        try { onRoomEvent(JSON.parse(e.data)); } catch { /* not an event of ours */ }
      });
      roomStream.addEventListener("end", () => {
        roomStream?.close();
        roomStream = null;
        const b = roomBar();
        if (b) b.querySelector(".room-line").textContent = t("roomEnded");
      });
    }
  }
  if (bar?.dataset.role === "trainer") {
    roomQR(bar);
    moveRoom(bar);
  }
}

// roomQRKey holds the trainer's choice for the room's QR code: "hidden" or "shown".
const roomQRKey = "sidecarlab-room-qr";

// roomQR gives the trainer's bar its QR code toggle: hidden, the code gives a slide its height
// back once the learners have joined. The choice is this browser's (localStorage), kept across
// moves, swaps and reloads; the bar is swapped at each step, so it is applied again each time.
function roomQR(bar) {
  const toggle = bar.querySelector('[data-testid="room-qr-toggle"]');
  if (!toggle) return;
  const apply = (hidden) => {
    bar.classList.toggle("qr-hidden", hidden);
    toggle.textContent = hidden ? t("qrShow") : t("qrHide");
    toggle.setAttribute("aria-expanded", String(!hidden));
  };
  let stored = null;
  try { stored = localStorage.getItem(roomQRKey); } catch { /* storage off: shown */ }
  apply(stored === "hidden");
  toggle.hidden = false;
  toggle.onclick = () => {
    const hidden = !bar.classList.contains("qr-hidden");
    apply(hidden);
    try { localStorage.setItem(roomQRKey, hidden ? "hidden" : "shown"); } catch { /* for this page only */ }
    paginateSlide(false, slidePage);
  };
}

function onRoomEvent(ev) {
  const bar = roomBar();
  if (!bar) return;
  if (bar.dataset.role === "following") {
    roomLatest = Math.max(roomLatest, ev.seq);
    followRoom();
  } else if (bar.dataset.role === "own") {
    const at = bar.querySelector('[data-testid="room-at"]');
    if (at) at.textContent = t("roomAt", { Step: ev.step });
  } else if (bar.dataset.role === "trainer") {
    for (const [id, n] of [["room-following", ev.following], ["room-own", ev.own]]) {
      const el = bar.querySelector(`[data-testid="${id}"]`);
      if (el && n !== undefined) el.textContent = String(n);
    }
  }
}

// followRoom swaps in the room's page while the page shows an older move than the room's last:
// one request at a time, and the last move wins.
async function followRoom() {
  if (roomFetching) return;
  roomFetching = true;
  try {
    for (let bar = roomBar(); bar && bar.dataset.role === "following" && Number(bar.dataset.seq) < roomLatest; bar = roomBar()) {
      const r = await fetch(address(bar.dataset.href), { headers: { "X-Sidecarlab-Partial": "1" } });
      const doc = new DOMParser().parseFromString(await r.text(), "text/html");
      if (!doc.getElementById("fragment") || !swapFrom(doc)) break;
    }
  } catch {
    // The next move tries again; the stream reconnects by itself.
  } finally {
    roomFetching = false;
  }
}

// moveRoom shows the page's view to the room (the server keeps nothing of the reader's own:
// language, presenter mode).
async function moveRoom(bar) {
  const form = document.getElementById("playground");
  const status = bar.querySelector('[data-testid="room-status"]');
  if (!form || !status) return;
  try {
    const r = await fetch(bar.dataset.href + "/move", {
      method: "POST",
      headers: { "X-Sidecarlab-Partial": "1" },
      body: new URLSearchParams({ view: form.dataset.permalink }),
    });
    if (r.ok) {
      const ans = await r.json();
      status.textContent = t("roomMoved", { Step: ans.step });
    } else if (r.status === 409) {
      status.textContent = t("roomHeld");
    } else {
      const doc = new DOMParser().parseFromString(await r.text(), "text/html");
      const msg = doc.querySelector('[data-testid="error-message"]')?.textContent || `${r.status} ${r.statusText}`;
      status.textContent = t("roomFailed", { Error: msg });
    }
  } catch (err) {
    status.textContent = t("roomFailed", { Error: err.message });
  }
}

// showShortLink writes the short link out whole (the server renders it relative: it never takes
// its own address from a request's Host) and, on the page a Share just opened, says that the link
// is made and that Copy link copies it.
function showShortLink(justShared) {
  const short = document.querySelector('[data-testid="short-link"]');
  if (!short) return;
  short.textContent = new URL(short.getAttribute("href"), location.href).href;
  if (justShared && location.pathname === short.getAttribute("href")) setStatus(t("shared"));
}

// outcomeStatus is the status line for an answer that is not OK, by what the server says it is
// (the fragment's data-outcome): Istio rejected documents, or they are not YAML, or not what
// Kubernetes reads (each marked in the editor), the manifest is
// empty, the request was refused as a whole (its error in the results), the namespace could not
// be read.
function outcomeStatus(outcome) {
  switch (outcome) {
    case "empty": return t("empty");
    case "refused": return t("refused");
    case "namespaceError": return t("namespaceError");
    case "rejectedYAML": return t("rejectedYAML");
    case "rejectedSchema": return t("rejectedSchema");
    default: return t("rejected");
  }
}

async function load(url, init, push) {
  const form = document.getElementById("playground");
  document.body.classList.add("busy");
  setStatus(t("injecting"));
  try {
    const ask = async (held) => {
      const headers = { "X-Sidecarlab-Partial": "1" };
      if (held) headers["X-Sidecarlab-Held"] = held;
      const r = await fetch(url, { ...init, headers });
      return [r, new DOMParser().parseFromString(await r.text(), "text/html")];
    };
    let [res, doc] = await ask([...heldRegions().keys()].join(" "));
    if (doc.getElementById("fragment") && !swapFrom(doc)) {
      // A region the page held when it asked is gone (another answer came first): ask for all.
      [res, doc] = await ask("");
      if (doc.getElementById("fragment")) swapFrom(doc);
    }
    if (!doc.getElementById("fragment")) {
      // The action failed (too large, too slow, busy): say so beside the editor, which keeps the
      // text, and leave the address bar at the last view that loaded.
      showActionError(doc, res, init.body instanceof FormData && [...init.body.values()].some((v) => v instanceof File && v.name));
      return false;
    }
    clearActionError();
    // An action is answered in place; its permalink is the new address.
    if (push) window.history.pushState({}, "", address(doc.getElementById("fragment").dataset.permalink));
    setStatus(res.ok ? "" : outcomeStatus(doc.getElementById("fragment").dataset.outcome));
    return true;
  } catch (err) {
    setStatus(t("unreachable", { Error: err.message }));
    return false;
  } finally {
    document.body.classList.remove("busy");
    if (form) form.setAttribute("aria-busy", "false");
  }
}

// address is u as this page's address: with the page's ?lang= when its address chose a language
// (the server carries it in every link and form it renders; the permalink, which is for sharing,
// stays language-free, and so does what Copy link copies).
function address(u) {
  const lang = new URL(location.href).searchParams.get("lang");
  if (!lang) return u;
  const url = new URL(u, location.href);
  url.searchParams.set("lang", lang);
  return url.pathname + url.search + url.hash;
}

// showActionError places the server's error (its #action-error, or a line made from the status
// when something between sent another body) above the results. Until an action succeeds, Copy
// link says that the text in the editor has no link instead of copying one. When files were
// uploaded, none of them reached the editor: the box says the editor keeps the text it had, and
// the results below, which are that text's, are marked as not the files'.
function showActionError(doc, res, uploaded) {
  let box = doc.getElementById("action-error");
  if (!box) {
    box = document.createElement("div");
    box.id = "action-error";
    box.className = "error-box action-error";
    box.setAttribute("role", "alert");
    box.dataset.testid = "action-error";
    const strong = document.createElement("strong");
    const status = { Status: `${res.status} ${res.statusText || t("error")}` };
    strong.textContent = uploaded ? t("uploadFailed", status) : t("actionFailed", status);
    box.append(strong);
  } else {
    box = document.importNode(box, true);
  }
  if (uploaded) {
    // The server's "your text is still in the editor" is about a paste: no file reached it.
    box.querySelector('[data-testid="still-there"]')?.remove();
    const p = document.createElement("p");
    p.dataset.testid = "upload-not-read";
    p.textContent = t("uploadNotRead");
    box.append(p);
    document.getElementById("results-body")?.classList.add("stale");
  }
  clearActionError();
  const results = document.getElementById("results-body");
  if (results) results.before(box);
  else document.getElementById("results")?.prepend(box);
  const form = document.getElementById("playground");
  if (form) form.dataset.failed = box.querySelector('[data-testid="error-message"]')?.textContent || box.textContent.trim();
  setStatus(t("seeError"));
}

function clearActionError() {
  document.getElementById("action-error")?.remove();
  const form = document.getElementById("playground");
  if (form) delete form.dataset.failed;
}

function selectTab(id, updateURL) {
  const panel = document.querySelector(`[data-panel="${id}"]`);
  const link = document.querySelector(`[data-tab="${id}"]`);
  if (panel && panel.dataset.empty && link) {
    // The last answer carried only the tab that was shown; fetch this one.
    // The address bar follows only when the tab loaded.
    return load(link.getAttribute("href"), {}, false).then((ok) => { if (ok) window.history.replaceState({}, "", link.getAttribute("href")); });
  }
  const tabs = document.querySelectorAll("[data-tab]");
  let href = null;
  for (const t of tabs) {
    const on = t.dataset.tab === id;
    t.classList.toggle("selected", on);
    t.setAttribute("aria-selected", String(on));
    if (on) href = t.getAttribute("href");
  }
  for (const p of document.querySelectorAll("[data-panel]")) p.hidden = p.dataset.panel !== id;
  const hidden = document.querySelector('input[name="tab"]');
  if (hidden) hidden.value = id;
  // A page that follows a room keeps its address (/r/<code>): the tab is the learner's to look at.
  if (updateURL && href && !following()) window.history.replaceState({}, "", href);
}

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const t = document.createElement("textarea");
    t.value = text;
    document.body.append(t);
    t.select();
    document.execCommand("copy");
    t.remove();
  }
}

// readDeepLink reads a change's deep link, "#step=N&doc=D&path=P" (the server's deepLink: step=
// names the row of the timeline, doc= the document on a page of several, the path comes last),
// or null when hash is none. An older link, "#path=P" alone, names no step: it opens the first
// row with that path, as it always did.
function readDeepLink(hash) {
  const m = hash.match(/^#(?:step=(\d+)&)?(?:doc=(\d+)&)?path=(.+)$/);
  if (!m) return null;
  try {
    return { step: m[1], doc: m[2], path: decodeURIComponent(m[3]) };
  } catch {
    return null; // not an escape a link of ours has
  }
}

// deepRow is the change row a deep link names, or null when the page does not show it (a step
// the page does not list, say).
function deepRow(link) {
  const within = link.step === undefined ? document : document.querySelector(`[data-testid="diff-step-${link.step}"]`);
  if (!within) return null;
  return [...within.querySelectorAll('[data-testid="change"]')]
    .find((r) => r.dataset.path === link.path && (link.doc === undefined || r.dataset.doc === link.doc)) || null;
}

// highlightDeepLink marks the change the address's deep link names, opens what folds it (its
// step, a fold of the serializer's changes), shows its tab and scrolls it into view.
function highlightDeepLink() {
  const link = readDeepLink(location.hash);
  if (!link) return;
  for (const old of document.querySelectorAll("tr.highlight")) old.classList.remove("highlight");
  const row = deepRow(link);
  if (!row) return;
  for (let d = row.closest("details"); d; d = d.parentElement.closest("details")) d.open = true;
  const panel = row.closest("[data-panel]");
  if (panel && panel.hidden) selectTab(panel.dataset.panel, false);
  row.classList.add("highlight");
  row.scrollIntoView({ block: "center" });
}

// filterPanel narrows the annotation panel to the entries whose data-search holds every word
// typed, and opens the groups that keep any. data-search is the server's search text (lower case:
// key, description, and the group names, summaries and search words of every language), and the
// words are split and lower-cased as the server does, so that without JavaScript the Filter
// button (?q=) finds the same. A panel the server already filtered holds
// only its matches: a new search there goes back to the server (on Enter or leaving the box).
function filterPanel(input, commit) {
  const groups = document.getElementById("annotation-groups");
  if (!groups) return;
  if (groups.dataset.filtered === "true") {
    if (!commit) return;
    const url = new URL(document.getElementById("playground").dataset.permalink, location.href);
    if (input.value.trim()) url.searchParams.set("q", input.value.trim()); else url.searchParams.delete("q");
    location.assign(address(url.href));
    return;
  }
  const terms = input.value.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  for (const g of groups.querySelectorAll("details.group")) {
    let n = 0;
    for (const a of g.querySelectorAll(".annotation[data-search]")) {
      const hit = terms.every((t) => a.dataset.search.includes(t));
      a.hidden = !hit;
      if (hit) n++;
    }
    g.hidden = n === 0;
    if (terms.length && n) g.open = true;
    shown += n;
  }
  const none = document.getElementById("annotation-no-match");
  if (none) none.hidden = shown > 0;
}

function inField(el) {
  return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
}

function init() {
  enhanceEditor();
  const form = document.getElementById("playground");
  if (form) {
    form.addEventListener("submit", (e) => {
      // Sharing leaves the page for the short link: let the browser post it.
      if (e.submitter && (e.submitter.getAttribute("formaction") || "").startsWith("/share")) {
        if (form.dataset.failed) {
          e.preventDefault();
          setStatus(t("noLink", { Error: form.dataset.failed }));
        }
        return;
      }
      e.preventDefault();
      const data = new FormData(form, e.submitter);
      // Files go as multipart; everything else as a plain urlencoded form.
      const hasFiles = [...data.values()].some((v) => v instanceof File && v.name);
      if (!hasFiles) data.delete("files");
      const body = hasFiles ? data : new URLSearchParams(data);
      load(form.getAttribute("action") || "/", { method: "POST", body }, true);
    });
  }
  document.addEventListener("click", (e) => {
    // The Embed offer is a popover: a click anywhere else closes it.
    const offer = document.querySelector("details.embed-offer[open]");
    if (offer && !offer.contains(e.target)) offer.open = false;
    const tab = e.target.closest("[data-tab]");
    if (tab) { e.preventDefault(); selectTab(tab.dataset.tab, true); return; }
    const opens = e.target.closest("[data-open-tab]"); // the pitfalls banner
    if (opens) { e.preventDefault(); selectTab(opens.dataset.openTab, true); document.getElementById("tab-" + opens.dataset.openTab)?.focus(); return; }
    const deep = e.target.closest(".deep");
    if (deep) {
      e.preventDefault();
      const form = document.getElementById("playground");
      const base = form ? new URL(form.dataset.permalink, location.href).href : location.href.split("#")[0];
      const link = base + deep.getAttribute("href");
      window.history.replaceState({}, "", deep.getAttribute("href"));
      highlightDeepLink();
      copyText(link).then(() => setStatus(t("changeCopied")));
      return;
    }
    const slide = e.target.closest("#slide-prev, #slide-next");
    if (slide) {
      e.preventDefault();
      const dir = slide.id === "slide-next" ? 1 : -1;
      if (!turnPage(dir)) goToSlide(slide.href, dir < 0);
      return;
    }
    const step = e.target.closest(".t-link");
    if (step) { e.preventDefault(); load(step.href, {}, true); return; }
    if (e.target.closest("#copy-link")) {
      if (form.dataset.failed) {
        // No link for a state the server did not show: it would not load either.
        setStatus(t("noLink", { Error: form.dataset.failed }));
        return;
      }
      const short = document.querySelector('[data-testid="short-link"]');
      const link = new URL(short ? short.getAttribute("href") : form.dataset.permalink, location.href).href;
      copyText(link).then(() => setStatus(t("linkCopied")));
      return;
    }
    if (e.target.closest("#copy-embed")) {
      copyText(document.getElementById("embed-snippet").value).then(() => setStatus(t("embedCopied")));
      return;
    }
    if (e.target.closest("#copy-yaml")) {
      copyText(document.getElementById("injected-yaml").textContent).then(() => setStatus(t("yamlCopied")));
      return;
    }
    // A click on the injected YAML fills in the line to ask why about (the form under it).
    const yaml = e.target.closest("#injected-yaml");
    const ask = document.getElementById("why-line");
    if (yaml && ask) {
      const n = lineAt(yaml);
      if (n > 0) ask.value = n;
    }
  });
  document.addEventListener("input", (e) => {
    if (e.target.id === "annotation-search") filterPanel(e.target, false);
  });
  document.addEventListener("change", (e) => {
    if (e.target.id === "annotation-search") { filterPanel(e.target, true); return; }
    if (e.target.id === "preset" && e.target.value) {
      form.requestSubmit(form.querySelector('button[value="preset"]'));
    }
  });
  document.addEventListener("keydown", (e) => {
    const offer = document.querySelector("details.embed-offer[open]");
    if (e.key === "Escape" && offer) {
      // Esc closes the Embed offer and gives the focus back to its button.
      e.preventDefault();
      offer.open = false;
      offer.querySelector("summary").focus();
      return;
    }
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter") {
      e.preventDefault();
      form.requestSubmit(form.querySelector('button[value="apply"]'));
      return;
    }
    if (e.key === "Enter" && e.target.matches(".a-input input")) {
      e.preventDefault();
      e.target.closest(".a-input").querySelector('button[name="add"]').click();
      return;
    }
    if (e.key === "Enter" && e.target.matches(".pc-input input")) {
      e.preventDefault();
      e.target.closest(".pc-input").querySelector('button[name="pcset"]').click();
      return;
    }
    if (e.key === "Enter" && e.target.id === "annotation-search") {
      e.preventDefault(); // not the form's first button (Load preset)
      filterPanel(e.target, true);
      return;
    }
    if (inField(e.target) || e.ctrlKey || e.metaKey || e.altKey) return;
    // The result tabs, as ARIA's tabs pattern has them: ←/→ to the previous/next tab (around the
    // ends), Home/End to the first/last; the tab reached is shown.
    if (e.target.matches('[role="tab"]') && ["ArrowLeft", "ArrowRight", "Home", "End"].includes(e.key)) {
      const tabs = [...document.querySelectorAll('[role="tab"][data-tab]')];
      const i = tabs.indexOf(e.target);
      const j = { ArrowLeft: i - 1 + tabs.length, ArrowRight: i + 1, Home: 0, End: tabs.length - 1 }[e.key] % tabs.length;
      e.preventDefault();
      const id = tabs[j].dataset.tab;
      tabs[j].focus();
      // A tab the last answer did not carry is fetched, and the tabs come back new: focus the new one.
      Promise.resolve(selectTab(id, true)).then(() => document.getElementById("tab-" + id)?.focus());
      return;
    }
    if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
      if (turnPage(e.key === "ArrowRight" ? 1 : -1)) { e.preventDefault(); return; }
      const a = document.getElementById(e.key === "ArrowRight" ? "slide-next" : "slide-prev");
      if (a) { e.preventDefault(); goToSlide(a.href, e.key === "ArrowLeft"); }
      return;
    }
    if (e.key === "[" || e.key === "]") {
      // The lab's previous / next step, where the page has the lab's strip (not in presenter
      // mode, whose arrows step through slides); the focus goes to the step's first change.
      const a = document.querySelector(`#lab a[rel="${e.key === "]" ? "next" : "prev"}"]`);
      if (a && a.offsetParent !== null) {
        e.preventDefault();
        load(a.href, {}, true).then((ok) => { if (ok) focusFirstChange(); });
      }
      return;
    }
    if (e.key === "?") {
      e.preventDefault();
      document.getElementById("shortcuts").showModal();
    } else if (/^[1-9]$/.test(e.key)) {
      const t = document.querySelectorAll("[data-tab]")[parseInt(e.key, 10) - 1];
      if (t) selectTab(t.dataset.tab, true);
    }
  });
  const help = document.getElementById("shortcuts-open");
  if (help) help.addEventListener("click", () => document.getElementById("shortcuts").showModal());
  const theme = document.getElementById("theme-toggle");
  if (theme) theme.addEventListener("click", () => {
    const dark = getComputedStyle(document.documentElement).colorScheme.includes("dark");
    const next = dark ? "light" : "dark";
    document.documentElement.dataset.theme = next;
    try { localStorage.setItem("theme", next); } catch {}
  });
  window.addEventListener("popstate", () => load(location.href, {}, false));
  window.addEventListener("hashchange", highlightDeepLink);
  highlightDeepLink();
  showShortLink(true);
  joinRoom();
  paginateSlide(false);
  window.addEventListener("resize", () => paginateSlide(false, slidePage));
}

// Presenter mode's slides fit the screen: the changes of a step that do not fit above the fold
// go on as the same step's next slides ("2/3" beside the step's number), a screenful each, and →
// and ← (and the slide links) go through them before the next or the previous step. Measured in
// the browser, so a slide fits whatever the projector; without the script, a step is one slide
// that scrolls.
let slideRows = [];
// slideUnits are what a slide's pages are made of: a step's changes, the lifecycle's verdicts, its
// diagrams (start and stop, presenter mode draws them apart), its capacity.
// and, on the Cluster tab's slides, its fixes, each workload's verdict and the steps of its trace;
// on the batch table's, its rows. A group (a workload's lifecycle, the Cluster tab's workload, its
// fixes) none of whose units is on a page is not on it, heading and all.
const slideUnits = [
  'details.step[open] .doc-note', 'details.step[open] tr[data-testid="change"]',
  '.lifecycle .verdict', '.lifecycle > svg.diagram', '.lifecycle > .capacity', '.lifecycle > details.sequence',
  '.settings-fixes li', '.cluster-doc > p', '.cluster-doc > h4', '.cluster-doc ol.trace > li', '.cluster-doc > ul',
  'tr[data-testid="batch-row"]',
  // A comparison's, an upgrade preview's, sidecar-or-ambient's: each side's verdicts and diagrams
  // (above), admission and what only it has, the documents and the changes between the sides,
  // the upgrade's keys; each workload's enrolment and what it drops; the capacity's rows.
  '.side > h3', '.side > ul > li', '[data-testid="compare-docs"] > li', '[data-testid="compare-changes"] tr[data-testid="change"]',
  'tr[data-testid="upgrade-key"]', '[data-testid="upgrade-plan"] > p',
  '[data-testid="ambient-workload"] > p', '[data-testid="ambient-workload"] > h3', '[data-testid="ambient-workload"] > ul > li',
  '.side > h4', '.side ul.psa > li', '[data-testid="ambient-workload"] tr[data-testid="change"]', '[data-testid="ambient-annotations"] tbody tr',
  '[data-testid="ambient-capacity"] tr',
].join(", ");
const slideGroups = ".lifecycle, .cluster-doc, .settings-fixes, main.present > section.panel, .sides > .panel, table";
let slideStarts = [0];
let slidePage = 0;
// slideBack: the slide being loaded is the previous step's, shown from its last page.
let slideBack = false;

// paginateSlide splits the shown step's changes into pages that fit under the fold, and shows
// the first (or, last, the last; or page n).
function paginateSlide(last, n) {
  const main = document.querySelector("main.present");
  const panel = document.querySelector('[data-panel]:not([hidden])') || main;
  slideRows = main && panel ? [...panel.querySelectorAll(slideUnits)] : [];
  slideStarts = [0];
  for (const r of document.querySelectorAll(".off-slide")) r.classList.remove("off-slide");
  if (slideRows.length === 0) { showSlidePage(0); return; }
  window.scrollTo(0, 0);
  // The room a page has: from where its first unit stands to the fold (what follows the last
  // unit is made room for by the check below).
  const room = window.innerHeight - slideRows[0].getBoundingClientRect().top - 8;
  // A diagram is as large as the slide's width allows, and no taller than a page (less a line or
  // two for what may follow it).
  const line = parseFloat(getComputedStyle(main).fontSize) * 1.5;
  for (const svg of panel.querySelectorAll(".lifecycle > svg.diagram")) {
    const vb = svg.viewBox.baseVal;
    if (vb && vb.width) svg.style.height = Math.max(1, Math.floor(Math.min(room - 2 * line, vb.height * svg.parentElement.clientWidth / vb.width))) + "px";
  }
  // A page starts at a unit and takes the units after it whose bottom is within the room (by
  // where they stand, margins and all: the units before a page are hidden, the page moves up).
  let top = slideRows[0].getBoundingClientRect().top;
  slideRows.forEach((r, i) => {
    const b = r.getBoundingClientRect();
    if (i > 0 && b.bottom - top > room) { slideStarts.push(i); top = b.top; }
  });
  // Then each page is checked as it shows: one whose text still ends below the fold (a unit
  // that grew when the ones before it were hidden, what follows the units) gives its last unit
  // to a page of its own after it.
  for (let p = 0; p < slideStarts.length; p++) {
    showSlidePage(p);
    while ((slideStarts[p + 1] ?? slideRows.length) - slideStarts[p] > 1 && slideBottom(main) > window.innerHeight) {
      slideStarts.splice(p + 1, 0, (slideStarts[p + 1] ?? slideRows.length) - 1);
      showSlidePage(p);
    }
  }
  showSlidePage(n !== undefined ? Math.min(n, slideStarts.length - 1) : last ? slideStarts.length - 1 : 0);
}

// slideBottom is where the slide's text ends: the lowest text shown in main.
function slideBottom(main) {
  let bottom = 0;
  const walk = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  const r = document.createRange();
  for (let n; (n = walk.nextNode());) {
    if (!n.textContent.trim()) continue;
    r.selectNodeContents(n);
    const b = r.getBoundingClientRect();
    if (b.height) bottom = Math.max(bottom, b.bottom);
  }
  return bottom;
}

function showSlidePage(p) {
  slidePage = p;
  const from = slideStarts[p] ?? 0;
  const to = slideStarts[p + 1] ?? slideRows.length;
  slideRows.forEach((r, i) => r.classList.toggle("off-slide", i < from || i >= to));
  for (const sec of document.querySelectorAll("main.present :is(" + slideGroups + ")")) {
    const units = [...sec.querySelectorAll(slideUnits)];
    sec.classList.toggle("off-slide", units.length > 0 && units.every((u) => u.classList.contains("off-slide")));
  }
  let mark = document.getElementById("slide-page");
  const n = document.querySelector('[data-testid="slide-n"]');
  if (slideStarts.length > 1 && n) {
    if (!mark) {
      mark = document.createElement("span");
      mark.id = "slide-page";
      mark.dataset.testid = "slide-page";
      n.after(mark);
    }
    mark.textContent = t("slidePage", { Page: p + 1, Pages: slideStarts.length });
  } else {
    mark?.remove();
  }
}

// turnPage shows the next (dir 1) or previous (dir -1) page of the step, if it has one.
function turnPage(dir) {
  const p = slidePage + dir;
  if (!document.querySelector("main.present") || p < 0 || p >= slideStarts.length) return false;
  showSlidePage(p);
  window.scrollTo(0, 0);
  return true;
}

// goToSlide loads another step's slide: its first page, or going back, its last.
function goToSlide(href, back) {
  slideBack = back; // the swap pages the slide (swapFrom), once
  load(href, {}, true).finally(() => { slideBack = false; });
}

// focusFirstChange moves the focus to the first change of the newest step the diff shows (a lab
// step's own annotation), or says there is none.
function focusFirstChange() {
  const steps = document.querySelectorAll('[data-panel="diff"] [data-testid^="diff-step-"]');
  const row = (steps.length ? steps[steps.length - 1] : document).querySelector('[data-testid="change"]');
  if (!row) return;
  row.tabIndex = -1;
  row.focus();
  row.scrollIntoView({ block: "center" });
}

// lineAt is the line, from 1, of el's text where the selection starts (a click's caret); 0 when
// the selection is not in el.
function lineAt(el) {
  const sel = window.getSelection();
  if (!sel || !sel.rangeCount) return 0;
  const r = sel.getRangeAt(0);
  if (!el.contains(r.startContainer)) return 0;
  const before = document.createRange();
  before.setStart(el, 0);
  before.setEnd(r.startContainer, r.startOffset);
  return before.toString().split("\n").length;
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
else init();

// The language switcher: choosing a language submits its form (without the script, its button
// does), which remembers the choice and comes back to this page.
for (const select of document.querySelectorAll("select[data-autosubmit]")) {
  select.addEventListener("change", () => select.form.requestSubmit());
}
