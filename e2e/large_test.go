//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// pasteJS pastes the text a script expression makes into the editor, as a person's paste does,
// over everything in it; it returns the text's length.
func pasteJS(ctx context.Context, t *testing.T, expr string) int {
	t.Helper()
	// Focus (a click would land somewhere in a tall editor), then select all with the keyboard.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector(".cm-content").focus(), true`)); err != nil {
		t.Fatal(err)
	}
	do(ctx, t, chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(() => {
		const text = `+expr+`;
		window.pasted = text;
		const dt = new DataTransfer();
		dt.setData("text/plain", text);
		document.querySelector(".cm-content").dispatchEvent(new ClipboardEvent("paste", {clipboardData: dt, bubbles: true, cancelable: true}));
		return document.getElementById("manifest").value === text ? text.length : -1;
	})()`))
	if err != nil || n < 0 {
		t.Fatalf("the paste did not replace the editor's text (%v)", err)
	}
	return n
}

// TestLargePasteKeepsTheText: a manifest over the server's 1 MiB limit is answered 413; the
// page keeps the editor and the pasted text, shows the error inline, leaves the address bar at
// the last view that loaded and offers no link for the text. Then a manifest that fits is
// applied: the error goes, and the address bar gets a link that loads.
func TestLargePasteKeepsTheText(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	sh := newShots(t)
	do(ctx, t,
		chromedp.Navigate(baseURL+"/"),
		shown(`.cm-content`),
	)
	before, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
	if err != nil {
		t.Fatal(err)
	}
	dep := strings.ReplaceAll(deployment, "checkout", "checkout-${i}")
	n := pasteJS(ctx, t, fmt.Sprintf("Array.from({length: 3200}, (_, i) => `%s`).join(\"---\\n\")", dep))
	if n <= 1<<20 {
		t.Fatalf("the paste is %d bytes, want over 1 MiB", n)
	}
	do(ctx, t,
		clickOn(`[data-testid="apply"]`),
		shown(`[data-testid="action-error"]`),
	)
	sh.take(ctx, "over-the-limit")
	if msg := text(ctx, t, `[data-testid="action-error"]`); !strings.Contains(msg, "413") || !strings.Contains(msg, "at most 1 MiB") {
		t.Fatalf("the inline error says %q, want 413 and the limit", msg)
	}
	// The form's textarea follows the editor; the editor shows (some lines of) the pasted text.
	kept, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		const shown = document.querySelector(".cm-editor .cm-content")?.textContent || "";
		return document.getElementById("manifest").value === window.pasted && shown.length > 100 &&
			window.pasted.replaceAll("\n", "").includes(shown.slice(0, 200));
	})()`))
	if err != nil || !kept {
		t.Fatalf("the editor lost the pasted text (%v)", err)
	}
	if after, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`)); after != before {
		t.Fatalf("the address bar changed to %.200q after a failed action", after)
	}
	do(ctx, t, clickOn(`[data-testid="copy-link"]`))
	if _, err := chromedp.Run(ctx, until(`document.getElementById("status").textContent.startsWith("No link")`)); err != nil {
		t.Fatalf("Copy link offered a link for text that was not shown: %v", err)
	}
	checkA11y(ctx, t, "the playground with an inline 413")

	// A manifest that fits: the error goes, and the address bar's new link loads.
	pasteJS(ctx, t, fmt.Sprintf("%q", deployment))
	do(ctx, t,
		clickOn(`[data-testid="apply"]`),
		gone(`[data-testid="action-error"]`),
	)
	if _, err := chromedp.Run(ctx, until(`location.href !== `+fmt.Sprintf("%q", before))); err != nil {
		t.Fatal(err)
	}
	after, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
	res, err := http.Get(after)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(after, "/?s=") {
		t.Fatalf("the address bar's link %.200q answers %d", after, res.StatusCode)
	}
	do(ctx, t, clickOn(`[data-testid="copy-link"]`))
	if _, err := chromedp.Run(ctx, until(`document.getElementById("status").textContent === "Link copied."`)); err != nil {
		t.Fatal(err)
	}
	sh.take(ctx, "applied")
}

// TestLargeUploadKeepsTheText: a file over the server's 1 MiB limit, chosen with the page's
// upload field and applied, is answered 413; the page says the file was not read, that the
// editor still holds the text it had, and marks the results below as that text's, not the
// file's. Before: "Your text is still in the editor", while the editor held the old text and the
// old results stood unmarked.
func TestLargeUploadKeepsTheText(t *testing.T) {
	t.Parallel()
	big := filepath.Join(t.TempDir(), "big.yaml")
	dep := strings.ReplaceAll(deployment, "checkout", "checkout-x")
	if err := os.WriteFile(big, []byte(strings.Repeat(dep+"---\n", (1<<20)/len(dep)+100)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	do(ctx, t,
		chromedp.Navigate(baseURL+"/"),
		shown(`.cm-content`),
	)
	before, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("manifest").value`))
	if err != nil {
		t.Fatal(err)
	}
	do(ctx, t,
		chromedp.SetUploadFiles(chromedp.CSS(`[data-testid="files"]`), []string{big}),
		clickOn(`[data-testid="apply"]`),
		shown(`[data-testid="upload-not-read"]`),
	)
	msg := text(ctx, t, `[data-testid="action-error"]`)
	if !strings.Contains(msg, "413") || !strings.Contains(msg, "holds the text it had before the upload") || strings.Contains(msg, "Your text is still in the editor") {
		t.Errorf("the inline error says %q, want 413, and that the editor keeps its text", msg)
	}
	after, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("manifest").value`))
	if err != nil || after != before {
		t.Errorf("the editor's text changed (%v)", err)
	}
	if stale, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("results-body").classList.contains("stale")`)); !stale {
		t.Error("the results of the editor's text are not marked as not the file's")
	}
	checkA11y(ctx, t, "the playground with a refused upload")
}
