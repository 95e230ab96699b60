package export

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/sessfix/sessfix/internal/atomicfile"
	"github.com/sessfix/sessfix/internal/recordfile"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/tidwall/gjson"
)

// exportStore reads one `opencode export` file:
//
//	{"info": Session, "messages": [{"info": Message, "parts": [Part, ...]}, ...]}
//
// It holds one session. Records' Raw are the exact bytes of each object
// inside the file and Loc.Line the line of its opening brace; ids come from
// the bodies, and a message or part belongs to the session (and message)
// whose entry encloses it. Messages are in file order, which is the order
// OpenCode exported them in.
type exportStore struct {
	info store.Info
	path string

	mu sync.Mutex
	// temps are the sessfix temporary files List found next to the file.
	temps []string
	// enc is the file's encoding, as last read.
	enc encoding
}

// isExport reports whether raw, an export file's text (decode), looks like
// an export file: a JSON object with an "info" object and a "messages"
// array.
func isExport(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' || !gjson.ValidBytes(t) {
		return false
	}
	info := gjson.GetBytes(t, "info")
	msgs := gjson.GetBytes(t, "messages")
	return info.IsObject() && msgs.IsArray()
}

func openExport(path string) *exportStore {
	return &exportStore{info: store.Info{Shape: store.ShapeExport, Path: path}, path: path}
}

// Info is the store's info, with a note about the sessfix temporary files
// List found next to the file (store.TempNote), and one naming the file's
// encoding when it is not UTF-8 without a byte order mark.
func (s *exportStore) Info() store.Info {
	s.mu.Lock()
	temps, enc := s.temps, s.enc
	s.mu.Unlock()
	info := s.info
	if note := store.TempNote(info, temps); note != "" {
		info.Notes = append(slices.Clip(info.Notes), note)
	}
	if enc.name != "" && !enc.plain() {
		info.Notes = append(slices.Clip(info.Notes), encodingNote(enc))
	}
	return info
}

// encodingNote says what encoding an export file is in, and that sessfix
// keeps it.
func encodingNote(enc encoding) string {
	return "the export file is " + enc.name + " (`opencode export` writes UTF-8 without one; Windows PowerShell 5 " +
		"saves `opencode export > file` as UTF-16LE): sessfix reads it, and writes it back in the same encoding"
}
func (s *exportStore) Close() error { return nil }

func (s *exportStore) read() ([]byte, time.Time, error) {
	raw, mod, perr := recordfile.Read(s.path, nil)
	if perr != nil {
		return nil, mod, fmt.Errorf("read export file %s: %w", s.path, perr)
	}
	raw, enc, err := decode(raw)
	if err != nil {
		return nil, mod, fmt.Errorf("export file %s: %w", s.path, err)
	}
	s.mu.Lock()
	s.enc = enc
	s.mu.Unlock()
	if err := store.CheckBody(raw); err != nil {
		return nil, mod, fmt.Errorf("export file %s: %w", s.path, err)
	}
	if !isExport(raw) {
		return nil, mod, fmt.Errorf("%s is no longer an opencode export file (want an object with \"info\" and \"messages\")", s.path)
	}
	return raw, mod, nil
}

// List returns the file's one session, and looks for the temporary files
// a killed sessfix left while replacing the file.
func (s *exportStore) List(ctx context.Context) ([]store.SessionRef, error) {
	temps := atomicfile.TempsOf(s.path)
	s.mu.Lock()
	s.temps = temps
	s.mu.Unlock()
	raw, mod, err := s.read()
	if err != nil {
		return nil, err
	}
	info := gjson.GetBytes(raw, "info")
	return []store.SessionRef{{ID: info.Get("id").String(), Title: info.Get("title").String(), Updated: mod}}, nil
}

// Load parses the whole file. The ref is only checked for its id.
func (s *exportStore) Load(ctx context.Context, ref store.SessionRef) (*store.Session, error) {
	raw, mod, err := s.read()
	if err != nil {
		return nil, err
	}
	lines := lineStarts(raw)
	rec := func(kind store.Kind, v gjson.Result) *store.Record {
		r := &store.Record{Kind: kind, ID: v.Get("id").String(), Raw: subslice(raw, v), Modified: mod,
			Loc: store.Location{Path: s.path, Line: lineOf(lines, v.Index)}}
		if !v.IsObject() {
			r.Err = &store.ParseError{Reason: "not an object"}
		}
		return r
	}
	info := gjson.GetBytes(raw, "info")
	sess := &store.Session{Store: s.info, ID: info.Get("id").String()}
	if ref.ID != sess.ID {
		return nil, fmt.Errorf("%s holds session %q, not %q", s.path, sess.ID, ref.ID)
	}
	sess.Info = rec(store.KindSession, info)
	sess.Title = info.Get("title").String()

	var ctxErr error
	gjson.GetBytes(raw, "messages").ForEach(func(_, m gjson.Result) bool {
		if ctxErr = ctx.Err(); ctxErr != nil {
			return false
		}
		if !m.IsObject() {
			r := rec(store.KindMessage, m)
			r.ID = ""
			sess.Broken = append(sess.Broken, r)
			return true
		}
		mi := m.Get("info")
		if !mi.Exists() {
			r := rec(store.KindMessage, m)
			r.ID = ""
			r.Err = &store.ParseError{Reason: "missing info", Detail: "message entry has no \"info\" object"}
			sess.Broken = append(sess.Broken, r)
			return true
		}
		mr := rec(store.KindMessage, mi)
		msg := sess.AddMessage(mr, sess.ID)
		var parts []*store.Part
		m.Get("parts").ForEach(func(_, p gjson.Result) bool {
			if pt := sess.MakePart(rec(store.KindPart, p), mr.ID, sess.ID); pt != nil {
				parts = append(parts, pt)
			}
			return true
		})
		if msg != nil {
			msg.Parts = parts
		} else {
			sess.Orphans = append(sess.Orphans, parts...)
		}
		return true
	})
	if ctxErr != nil {
		return nil, ctxErr
	}
	return sess, nil
}

// subslice returns the bytes of v inside raw (sharing raw's memory), or a
// copy of v.Raw when the index is unknown.
func subslice(raw []byte, v gjson.Result) []byte {
	if v.Index > 0 && v.Index+len(v.Raw) <= len(raw) && string(raw[v.Index:v.Index+len(v.Raw)]) == v.Raw {
		return raw[v.Index : v.Index+len(v.Raw) : v.Index+len(v.Raw)]
	}
	return []byte(v.Raw)
}

// lineStarts returns the offset of the first byte of every line.
func lineStarts(raw []byte) []int {
	starts := []int{0}
	for i, b := range raw {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineOf returns the 1-based line holding offset off.
func lineOf(starts []int, off int) int {
	return sort.Search(len(starts), func(i int) bool { return starts[i] > off })
}
