package web

// ShareSecrets is the page shown instead of a short link when the manifest holds values that
// look secret: what was found (never the values) and the person's choice. Nothing is stored
// until they choose.
type ShareSecrets struct {
	// Headline says what was found and that nothing was stored; Choice what each button does.
	Headline, Choice string
	Rows             []SecretRow
	// More says how many findings the list leaves out ("" when none).
	More string
	// Form is the state to share, posted again with the choice.
	Form Form
	// Cancel is the view's own permalink, back to the playground.
	Cancel string
	// Action is where the choice is posted: "" for a share (/share); a room's start (/rooms)
	// or move (/r/<code>/move) posts View, the view's address, instead of Form.
	Action, View string
}

// action is where s's form posts.
func (s ShareSecrets) action() string {
	if s.Action == "" {
		return "/share"
	}
	return s.Action
}

// words is the message id of s's word key: a share's (page.share.<key>), or a room's
// (page.room.secrets.<key>) when the choice moves a room.
func (s ShareSecrets) words(key string) string {
	if s.View != "" {
		return "page.room.secrets." + key
	}
	return "page.share." + key
}

// SecretRow is one finding: where it is (a document and line, or an annotation step) and what
// it is.
type SecretRow struct {
	Where, Kind, Path, Excerpt string
}

// Room is a page's place in a room: a workshop whose learners' pages follow the trainer's. It
// is the bar above the playground; nil outside a room (and outside presenter mode, where a
// trainer starts one).
type Room struct {
	Role RoomRole
	// Code is the room's code as a person reads it out (K7QM-2XD9); Href is the learners' page
	// (/r/<code>).
	Code, Href string
	// URL is the learners' page as a phone opens it, and QR its code (the trainer's bar).
	URL string
	QR  QR
	// Following and Own count the learners: following the trainer, and on their own.
	Following, Own int
	// Step is the step the room shows (a learner on their own is told where the room is), Seq
	// the room's move this page shows (a following page's script asks for the next one).
	Step int
	Seq  uint64
	// Fork is the room's view as the learner's own: "try it myself".
	Fork string
	// View is this view's address: what a room starts with (RoomStart), or what "show this to
	// the room" moves it to (the trainer's).
	View string
	// Events is the event stream the page's script listens to ("" for none).
	Events string
	// Alone says the room is this server's only for now: the replicas share rooms through a
	// database that does not answer (the trainer's bar).
	Alone bool
}

// RoomRole is who a page's room bar is for.
type RoomRole string

const (
	// RoomStart: presenter mode outside a room; the bar offers to start one.
	RoomStart RoomRole = "start"
	// RoomTrainer: the trainer's page (its browser holds the room's token).
	RoomTrainer RoomRole = "trainer"
	// RoomFollowing: a learner's page that follows the trainer (/r/<code>).
	RoomFollowing RoomRole = "following"
	// RoomOwn: a learner's own view, who went off from the room and may go back.
	RoomOwn RoomRole = "own"
	// RoomEnded: a view of a room that is gone.
	RoomEnded RoomRole = "ended"
)

// QR is a QR code drawn as one SVG path: Size modules square (its quiet zone included), the
// dark modules Path's unit squares. Drawn with fill attributes, so the page's CSP, which admits
// no inline style, has nothing to admit.
type QR struct {
	Size int
	Path string
}
