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
}

// SecretRow is one finding: where it is (a document and line, or an annotation step) and what
// it is.
type SecretRow struct {
	Where, Kind, Path, Excerpt string
}
