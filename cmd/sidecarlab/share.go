package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/spf13/cobra"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
)

// shareTimeout bounds the whole exchange with the server, and maxShareAnswer what is read of
// its answer (a 422 lists at most secrets.MaxFindings findings).
const (
	shareTimeout   = 60 * time.Second
	maxShareAnswer = 1 << 20
)

// newShareCmd is share: a manifest (with its annotation steps and settings) stored as a short
// link on a sidecarlab server, through its API (POST /api/v1/share), which checks it for secrets
// first.
func newShareCmd(c *cli) *cobra.Command {
	var (
		files               fileFlags
		settings            settingsFlags
		steps               stepFlags
		server              string
		redact, allowSecret bool
	)
	cmd := &cobra.Command{
		Use:   "share -f FILENAME [--annotate KEY=VALUE]... [--server URL]",
		Short: c.T("cli.share.short"),
		Long:  c.T("cli.share.long"),
		Example: examples(c,
			"# "+c.T("cli.share.example.e1"),
			"{} share -f deployment.yaml --annotate sidecar.istio.io/proxyCPU=200m",
			"",
			"# "+c.T("cli.share.example.e2"),
			"{} share -f deployment.yaml --server https://sidecarlab.example.com --redact"),
		Args: c.noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if server == "" {
				return usageError{c.T("cli.error.server_required")}
			}
			base, err := url.Parse(server)
			if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
				return usageError{c.T("cli.error.server_url", "Value", fmt.Sprintf("%q", server))}
			}
			if redact && allowSecret {
				return usageError{c.T("cli.error.redact_or_allow")}
			}
			j, st, s, err := request(c, files, settings, steps)
			if err != nil {
				return err
			}
			if s.Mode == engine.ModeKubeInject {
				s.Mode = "" // the server's default, as its form writes it: the same view, the same link
			}
			body, err := json.Marshal(api.ShareRequest{
				InjectRequest: api.InjectRequest{Manifest: string(j.manifest), Steps: st, Settings: s},
				Redact:        redact, AllowSecrets: allowSecret,
			})
			if err != nil {
				return err
			}
			return shareRun(c, base, body, j)
		},
	}
	files.register(c, cmd)
	settings.register(c, cmd)
	steps.register(c, cmd)
	server = c.getenv("SIDECARLAB_SERVER")
	cmd.Flags().StringVar(&server, "server", server, c.T("cli.flag.share.server"))
	cmd.Flags().BoolVar(&redact, "redact", false, c.T("cli.flag.share.redact"))
	cmd.Flags().BoolVar(&allowSecret, "allow-secrets", false, c.T("cli.flag.share.allow_secrets"))
	_ = cmd.RegisterFlagCompletionFunc("server", cobra.NoFileCompletions)
	return cmd
}

// shareRun posts the request and prints the link, or what the server refused and why.
func shareRun(c *cli, base *url.URL, body []byte, j joined) error {
	ctx, cancel := context.WithTimeout(c.ctx, shareTimeout)
	defer cancel()
	endpoint := base.JoinPath("api/v1/share")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	// The server words its refusals (secrets found, a bad document) in the CLI's language.
	req.Header.Set("Accept-Language", c.loc().Lang())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", c.T("cli.share.sharing_on", "Server", base.Redacted()), err)
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(res.Body, maxShareAnswer))
	if err != nil {
		return fmt.Errorf("%s: %w", c.T("cli.share.reading_answer", "Server", base.Redacted()), err)
	}
	switch res.StatusCode {
	case http.StatusCreated:
		var ok api.ShareResponse
		if err := json.Unmarshal(answer, &ok); err != nil || ok.URL == "" {
			return errors.New(c.T("cli.share.no_link", "Server", base.Redacted()))
		}
		link, err := url.Parse(ok.URL)
		if err != nil {
			return errors.New(c.T("cli.share.bad_link", "Server", base.Redacted()))
		}
		// A server without --public-url answers the path alone: it is under --server.
		_, err = fmt.Fprintln(c.stdout, base.ResolveReference(link).String())
		return err
	case http.StatusUnprocessableEntity:
		var sec api.SecretsResponse
		if json.Unmarshal(answer, &sec) == nil && len(sec.Secrets) > 0 {
			printSecrets(c, j, sec)
			return errSilent
		}
	}
	return apiFailure(c, base, res.StatusCode, answer, j)
}

// printSecrets lists a 422's findings on stderr, each placed in its file, and what to do.
func printSecrets(c *cli, j joined, sec api.SecretsResponse) {
	fmt.Fprintln(c.stderr, "sidecarlab:", c.T("cli.share.not_shared", "Reason", sec.Error.Message))
	for _, f := range sec.Secrets {
		if f.Step > 0 {
			// An --annotate value: it is in no file.
			fmt.Fprintf(c.stderr, "  --annotate: %s\n", c.words().SecretLine(f.Finding))
			continue
		}
		p := j.partOf(f.Line, f.Doc)
		local := f.Finding
		local.Doc -= p.docsBefore
		local.Line = max(1, local.Line-p.line+1)
		fmt.Fprintf(c.stderr, "  %s: %s\n", p.name, c.words().SecretLine(local))
	}
	if more := c.words().SecretsMore(len(sec.Secrets), sec.Total); more != "" {
		fmt.Fprintln(c.stderr, "  "+more)
	}
}

// apiFailure is the server's error answer as an error: its message, placed in the file it is
// about when it names a document or a line.
func apiFailure(c *cli, base *url.URL, status int, answer []byte, j joined) error {
	var e api.Error
	if json.Unmarshal(answer, &e) != nil || e.Error.Message == "" {
		// Not the API's error body (a proxy's page, a rate limit's text): its first line, bounded.
		line, _, _ := strings.Cut(strings.TrimSpace(string(answer)), "\n")
		if len(line) > 200 {
			line = strings.ToValidUTF8(line[:200], "") + "…"
		}
		return errors.New(c.T("cli.share.failed", "Server", base.Redacted(), "Status", fmt.Sprintf("%d %s", status, http.StatusText(status)), "Answer", line))
	}
	if e.Error.Doc > 0 || e.Error.Line > 0 {
		return j.locate(&input.Error{Doc: e.Error.Doc, Line: e.Error.Line, Field: e.Error.Field, Msg: e.Error.Message})
	}
	return errors.New(e.Error.Message)
}
