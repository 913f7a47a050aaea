//go:build e2e

package e2e

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// withPassword is a Deployment whose env carries a password.
const withPassword = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop
spec:
  selector:
    matchLabels:
      app: shop
  template:
    metadata:
      labels:
        app: shop
    spec:
      containers:
      - name: shop
        image: nginx
        env:
        - name: DB_PASSWORD
          value: hunter2-correct-horse
`

// TestShareWithSecrets: Share on a manifest with a password stores nothing and shows what was
// found (never the value), with the choice; "Redact and share" stores the redacted state.
func TestShareWithSecrets(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	do(ctx, t,
		chromedp.Navigate(link(withPassword)),
		shown(`.cm-content`),
		clickOn(`[data-testid="share"]`),
		shown(`[data-testid="share-secrets"]`),
	)
	found := text(ctx, t, `[data-testid="share-secrets-list"]`)
	if !strings.Contains(found, "DB_PASSWORD") || strings.Contains(found, "hunter2") {
		t.Fatalf("what was found: %q (want the env name, never the value)", found)
	}
	checkA11y(ctx, t, "the share confirmation with secrets")
	newShots(t).take(ctx, "share-secrets")
	do(ctx, t,
		clickOn(`[data-testid="share-redact"]`),
		shown(`[data-testid="short-link"]`),
	)
	short := attr(ctx, t, `[data-testid="short-link"]`, "href")
	if !regexp.MustCompile(`^/s/[0-9a-hjkmnp-tv-z]{16}$`).MatchString(short) {
		t.Fatalf("short link %q", short)
	}
	res, err := http.Get(baseURL + short + "/state.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if strings.Contains(string(b), "hunter2") || !strings.Contains(string(b), `\u003credacted\u003e`) {
		t.Fatalf("the stored state: %s", b)
	}
}
