package api

import "github.com/sidecarlab/sidecarlab/wording"

// ShareRequest is the body of POST /api/v1/share: the body of /api/v1/inject, and what to do
// with values that look secret. With neither flag, a manifest that has some is not stored (422,
// listing them in a SecretsResponse).
type ShareRequest struct {
	InjectRequest
	// Redact stores the manifest with each such value replaced by <redacted> (secrets.Redact).
	Redact bool `json:"redact,omitempty"`
	// AllowSecrets stores it as it is.
	AllowSecrets bool `json:"allowSecrets,omitempty"`
}

// ShareResponse is its answer: the link's id and its address, absolute when the server knows
// its public address (--public-url), else the path (/s/<id>).
type ShareResponse struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

// SecretsResponse is the 422 of a share with values that look secret: the API's error body,
// and the findings (at most secrets.MaxFindings of Total; never the values).
type SecretsResponse struct {
	Error   ErrorBody               `json:"error"`
	Secrets []wording.SecretFinding `json:"secrets"`
	Total   int                     `json:"total"`
}
