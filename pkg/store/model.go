package store

import (
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/sessfix/sessfix/internal/bodyindex"
	"github.com/tidwall/gjson"
)

// Shape names an on-disk layout: the Info.Shape of a store, in findings,
// JSON output and backup manifests. Each shape package under pkg/store
// reads and writes one or more layouts; pkg/store/shapes registers them.
// Nothing in this package depends on which shapes exist.
type Shape string

// The names of the shapes sessfix reads today. The rest of sessfix tells
// some of them apart (SQLite data columns hold compact JSON without ids;
// watch listens to each layout's files); a new shape package may declare
// its own name.
const (
	ShapeSQLite   Shape = "sqlite"   // OpenCode 1.2 – 1.18: opencode.db with v1 tables
	ShapeSQLite2  Shape = "sqlite2"  // OpenCode 2: opencode.db with session_v2 (and frozen v1 tables)
	ShapeStorage  Shape = "storage"  // OpenCode 1.0–1.1: <data>/storage/{session,message,part}
	ShapeProject  Shape = "project"  // OpenCode ≤ 0.5: <data>/project/<slug>/storage/session/...
	ShapeSessions Shape = "sessions" // <root>/sessions/<sessionID>/{messages,parts}
	ShapeExport   Shape = "export"   // one `opencode export` JSON file
)

// Kind is the kind of a record.
type Kind string

// Record kinds.
const (
	KindSession Kind = "session"
	KindMessage Kind = "message"
	KindPart    Kind = "part"
)

// Location says where a record lives.
type Location struct {
	// Path is the record's file (JSON shapes), the export file, or the database file.
	Path string `json:"path"`
	// Line is the 1-based line of the record's opening brace inside Path
	// (export files; 1 for one-record JSON files). Zero when unknown.
	Line int `json:"line,omitempty"`
	// Table and RowID locate a SQLite row.
	Table string `json:"table,omitempty"`
	RowID int64  `json:"rowid,omitempty"`
}

// String renders the location for humans and CI: "path", "path:line" or
// "path:table/rowid".
func (l Location) String() string {
	switch {
	case l.Table != "":
		return l.Path + ":" + l.Table + "/" + strconv.FormatInt(l.RowID, 10)
	case l.Line > 0:
		return l.Path + ":" + strconv.Itoa(l.Line)
	default:
		return l.Path
	}
}

// Record is one stored object: a session info, a message or a part.
type Record struct {
	Kind Kind
	// ID is the record's authoritative id: from the file name (JSON shapes),
	// the id column (SQLite) or the body (export files).
	ID string
	// Raw is the record's body exactly as stored: the whole file, the SQLite
	// data column, or the object's bytes inside an export file.
	Raw []byte
	Loc Location
	// Modified is the file's mtime, or time_updated for SQLite rows.
	Modified time.Time
	// Err is set on Broken records: why the body could not be used.
	Err error
	// Parent is, for a Broken part, the message whose directory or row
	// holds it (removing that message removes the part too); "" when
	// unknown or not a part.
	Parent string

	// idx locates the body's top-level keys (messages and parts; see
	// internal/bodyindex). It only speeds Get up and is ignored once Raw
	// changes.
	idx *bodyindex.Index
	// valid says Check validated the body idx indexes.
	valid bool
}

// Get reads a JSON path (gjson syntax) from the record's body.
func (r *Record) Get(path string) gjson.Result {
	if res, ok := r.idx.Lookup(r.Raw, path); ok {
		return res
	}
	return gjson.GetBytes(r.Raw, path)
}

// Validated reports whether the reader validated Raw as it is now (when it
// read the record): Raw is then valid JSON without checking it again. A
// record built or edited in memory says no.
func (r *Record) Validated() bool { return r.valid && r.idx.Of(r.Raw) }

// Message is a message record with its parts in OpenCode's order (by id).
type Message struct {
	Record
	// SessionID is authoritative: from the path or the session_id column.
	SessionID string
	// Role is "user" or "assistant" (from the body).
	Role string
	// Created is time.created (or time_created) in epoch milliseconds.
	Created int64
	Parts   []*Part
}

// Part is a part record.
type Part struct {
	Record
	// MessageID is authoritative: from the path or the message_id column.
	MessageID string
	// SessionID is the session the path or the session_id column puts the
	// part in; empty when the shape does not store it outside the body.
	SessionID string
	// Type is the part's "type" (text, reasoning, tool, step-start, ...).
	Type string
}

// Session is one loaded session: info, messages in OpenCode's order, and
// every record that could not be used.
type Session struct {
	// Store describes the store the session was loaded from.
	Store Info
	ID    string
	// Info is the session record; nil when the shape has none (sessions
	// layout without session.json) or it is missing (see InfoMissing).
	Info *Record
	// InfoMissing is true when the shape stores session records and this
	// session's is absent: its messages are orphans.
	InfoMissing bool
	Title       string
	// Messages in the order OpenCode sends them.
	Messages []*Message
	// Broken holds records that could not be parsed (0-byte, NUL-filled,
	// truncated, not an object, missing type/role), with Kind and ID taken
	// from the path where possible.
	Broken []*Record
	// Orphans holds readable records that belong to no loaded parent: parts
	// whose message does not exist. Messages without a session are reported
	// through InfoMissing.
	Orphans []*Part
	// OpenCode2 is set for the sessions of an OpenCode 2 database (shape
	// sqlite2): which of its tables the records come from, and what the
	// database says about the session besides them. Nil in every other
	// store.
	OpenCode2 *OpenCode2
	// Projects are the store's project rows, read with the session (SQLite:
	// the project table; the storage tree: storage/project/<id>.json); nil
	// for shapes that keep none. OpenCode lists a session under the project
	// its directory resolves to.
	Projects []Project
	// Packages, when set, names the AI SDK package OpenCode loads for a
	// provider's model, from the user's OpenCode config and models
	// catalogue (pkg/ocenv's Models): no store records it. A caller that
	// reads them sets it after loading the session (scan, fix and show do);
	// nil when they were not read.
	Packages Packages
}

// Packages names the AI SDK package (an npm name) OpenCode loads for
// providerID/modelID, "" when it cannot be told.
type Packages interface {
	Package(providerID, modelID string) string
}

// Project is one project row: its id (a git repository's first commit, or
// "global" for directories outside git) and its worktree.
type Project struct {
	ID       string
	Worktree string
}

// PartCount is the number of parts across all messages.
func (s *Session) PartCount() int {
	n := 0
	for _, m := range s.Messages {
		n += len(m.Parts)
	}
	return n
}

// Message returns the message with the given id, or nil.
func (s *Session) Message(id string) *Message {
	for _, m := range s.Messages {
		if m.ID == id {
			return m
		}
	}
	return nil
}

// Records yields every record of the session in load order: the session
// record (when there is one), each message followed by its parts, then the
// Broken records and the Orphans.
func (s *Session) Records() iter.Seq[*Record] {
	return func(yield func(*Record) bool) {
		if s.Info != nil && !yield(s.Info) {
			return
		}
		for _, m := range s.Messages {
			if !yield(&m.Record) {
				return
			}
			for _, p := range m.Parts {
				if !yield(&p.Record) {
					return
				}
			}
		}
		for _, b := range s.Broken {
			if !yield(b) {
				return
			}
		}
		for _, p := range s.Orphans {
			if !yield(&p.Record) {
				return
			}
		}
	}
}

// LastModified is the newest modification time of any record in the session,
// orphaned parts included (OpenCode may be writing them too).
func (s *Session) LastModified() time.Time {
	var t time.Time
	for r := range s.Records() {
		if r.Modified.After(t) {
			t = r.Modified
		}
	}
	return t
}

// ParseError describes why a record body is unusable.
type ParseError struct {
	Reason string // "empty file", "NUL-filled", "truncated JSON", "invalid JSON", "not an object", "missing type", "missing role"
	Detail string
	// Entry is set when the path itself is the problem, not its bytes: a
	// directory, FIFO or link where a record file belongs, a file where a
	// directory belongs, a file that cannot be opened. sessfix cannot back
	// such an entry up, so it never moves it.
	Entry bool
}

func (e *ParseError) Error() string {
	if e.Detail == "" {
		return e.Reason
	}
	return fmt.Sprintf("%s: %s", e.Reason, e.Detail)
}
