// Package store keeps shared links: a state stored once under an id derived from its content,
// never overwritten. It speaks to an embedded SQLite file by default (pure Go, no cgo) or to
// PostgreSQL, so several replicas can share links.
package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base32"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // the "sqlite" database/sql driver
)

// ErrNotFound is Get's answer for an id nobody stored, and for a string that is not an id at all
// (ValidID), which is never looked up.
var ErrNotFound = errors.New("no such link")

// Link is one stored state.
type Link struct {
	ID string
	// State is the state's JSON, exactly as it was shared.
	State []byte
	// Istio is the Istio release the link was made with; OutputHash the hash of the output it
	// showed then, so a later Istio can say whether its output differs.
	Istio      string
	OutputHash string
	Created    time.Time
}

// idEncoding is Crockford's base32 alphabet in lower case (no i, l, o or u to misread), unpadded.
var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// IDLength is 16 characters: 80 bits of a SHA-256, far beyond any chance of a collision here.
const IDLength = 16

var idRE = regexp.MustCompile(`^[0-9a-hjkmnp-tv-z]{16}$`)

// ID derives a link's id from its content: the same state always gets the same id.
func ID(state []byte) string {
	sum := sha256.Sum256(state)
	return idEncoding.EncodeToString(sum[:])[:IDLength]
}

// ValidID reports whether s could be an id (anything else is not looked up at all).
func ValidID(s string) bool { return idRE.MatchString(s) }

// SQL is a store on a database/sql database: SQLite or PostgreSQL.
type SQL struct {
	db      *sql.DB
	dialect string
}

// OpenSQLite opens (creating on first use) the SQLite file at path, in WAL mode.
func OpenSQLite(path string) (*SQL, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return nil, err
	}
	return open(db, "sqlite")
}

// OpenPostgres connects to PostgreSQL with a DSN ("postgres://user@host:5432/db?sslmode=disable").
func OpenPostgres(dsn string) (*SQL, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, err
	}
	return open(db, "postgres")
}

func open(db *sql.DB, dialect string) (*SQL, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ts := "TEXT"
	if dialect == "postgres" {
		ts = "TIMESTAMPTZ"
	}
	_, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS links (
		id          TEXT PRIMARY KEY,
		state       TEXT NOT NULL,
		istio       TEXT NOT NULL,
		output_hash TEXT NOT NULL,
		created     `+ts+` NOT NULL
	)`)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("create the links table: %w", err)
	}
	return &SQL{db: db, dialect: dialect}, nil
}

func (s *SQL) q(query string) string {
	if s.dialect != "postgres" {
		return query
	}
	n := 0
	var b strings.Builder
	for _, r := range query {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Put stores a link unless its id is already stored: stored states are never overwritten.
func (s *SQL) Put(ctx context.Context, l Link) error {
	if !ValidID(l.ID) {
		return fmt.Errorf("invalid id %q", l.ID)
	}
	created := l.Created
	if created.IsZero() {
		created = time.Now().UTC()
	}
	var when any = created.Format(time.RFC3339Nano)
	if s.dialect == "postgres" {
		when = created
	}
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO links (id, state, istio, output_hash, created) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`),
		l.ID, string(l.State), l.Istio, l.OutputHash, when)
	return err
}

// Get loads a link.
func (s *SQL) Get(ctx context.Context, id string) (Link, error) {
	if !ValidID(id) {
		return Link{}, ErrNotFound
	}
	var l Link
	var state string
	var created any
	err := s.db.QueryRowContext(ctx, s.q(`SELECT id, state, istio, output_hash, created FROM links WHERE id = ?`), id).
		Scan(&l.ID, &state, &l.Istio, &l.OutputHash, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Link{}, ErrNotFound
	}
	if err != nil {
		return Link{}, err
	}
	l.State = []byte(state)
	switch c := created.(type) {
	case time.Time:
		l.Created = c
	case string:
		l.Created, _ = time.Parse(time.RFC3339Nano, c)
	}
	return l, nil
}

// Ping checks the database answers.
func (s *SQL) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Close closes the database.
func (s *SQL) Close() error { return s.db.Close() }
