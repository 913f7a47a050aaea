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

// RoomRequest is POST /api/v1/rooms (a new room) and PUT /api/v1/rooms/{code} (a move): a
// state as the share API takes it, and the step and tab of it the room shows. A state with
// values that look secret is held as a share is (SecretsResponse) until Redact or AllowSecrets
// says what to do.
type RoomRequest struct {
	ShareRequest
	// Step is the timeline's step the room shows (0: the manifest as injected); absent, the
	// first annotation's, as a presentation starts.
	Step *int `json:"step,omitempty"`
	// Tab is the results tab the room shows ("" for the default one).
	Tab string `json:"tab,omitempty"`
}

// RoomResponse answers a room's creation (with Token, once: only its trainer moves it, with
// `Authorization: Bearer <token>`), a move, and GET /api/v1/rooms/{code} (the trainer's counts).
type RoomResponse struct {
	// Code is the room's code and URL its learners' page (/r/<code>), absolute when the server
	// knows its public address.
	Code string `json:"code"`
	URL  string `json:"url"`
	// Token is the trainer's, on creation only.
	Token string `json:"token,omitempty"`
	// Seq counts the room's moves (its creation is the first); Step is the step it shows.
	Seq  uint64 `json:"seq"`
	Step int    `json:"step"`
	// Following and Own count the learners: following the trainer, and on their own.
	Following int `json:"following"`
	Own       int `json:"own"`
}
