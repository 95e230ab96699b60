package realstore

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/tidwall/sjson"

	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// Versions are the OpenCode releases testdata/real holds.
var Versions = []string{ocrelease.V1_18, ocrelease.V1_1}

// Store is a copy of one recorded data dir.
type Store struct {
	// Dir is the data dir; Path the store in it (opencode.db or storage/).
	Dir, Path string
	// SessionID is the tool-loop session: user, assistant (reasoning, bash
	// tool), assistant (reasoning, text).
	SessionID string
	// Attempt is when the failed attempt finished (zero before FailResume).
	Attempt time.Time
}

// Copy copies testdata/real/opencode-VERSION into a temporary directory.
func Copy(t testing.TB, version string) *Store {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "real", "opencode-"+version)
	dir := t.TempDir()
	if err := ocrelease.CopyTree(src, dir); err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
	s := &Store{Dir: dir, Path: filepath.Join(dir, "opencode.db")}
	if _, err := os.Stat(s.Path); err != nil {
		s.Path = filepath.Join(dir, "storage")
	}
	for _, ss := range storetest.LoadAll(t, storetest.OpenOne(t, s.Path)) {
		for _, m := range ss.Messages {
			for _, p := range m.Parts {
				if p.Type == "tool" {
					s.SessionID = ss.ID
				}
			}
		}
	}
	if s.SessionID == "" {
		t.Fatalf("%s holds no tool-loop session", src)
	}
	return s
}

// CopyTitled copies testdata/real/opencode-DIR like Copy and makes the
// session titled title the one the Store works on (the provider family
// stores name their sessions by title).
func CopyTitled(t testing.TB, dir, title string) *Store {
	t.Helper()
	s := Copy(t, dir)
	for _, ss := range storetest.LoadAll(t, storetest.OpenOne(t, s.Path)) {
		if ss.Title == title {
			s.SessionID = ss.ID
			return s
		}
	}
	t.Fatalf("opencode-%s holds no session titled %q", dir, title)
	return nil
}

// Load loads the tool-loop session.
func (s *Store) Load(t testing.TB) *store.Session {
	t.Helper()
	ses, err := storetest.OpenOne(t, s.Path).Load(context.Background(), store.SessionRef{ID: s.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	return ses
}

// apply writes edits to the tool-loop session, the way another program
// would: through the store's writer, with no backup.
func (s *Store) apply(t testing.TB, edits ...store.Edit) {
	t.Helper()
	st := storetest.OpenOne(t, s.Path)
	w, err := shapes.OpenWriter(st.Info(), store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Apply(context.Background(), &store.ChangeSet{Store: st.Info(), SessionID: s.SessionID, Edits: edits}); err != nil {
		t.Fatal(err)
	}
}

func (s *Store) assistant(t testing.TB, ses *store.Session, n int) *store.Message {
	t.Helper()
	for _, m := range ses.Messages {
		if m.Role == "assistant" {
			if n == 0 {
				return m
			}
			n--
		}
	}
	t.Fatalf("session %s has too few assistant messages", ses.ID)
	return nil
}

func (s *Store) setPart(t testing.TB, m *store.Message, typ, key string, value any) *store.Part {
	t.Helper()
	for _, p := range m.Parts {
		if p.Type != typ {
			continue
		}
		after, err := sjson.SetBytes(append([]byte(nil), p.Raw...), key, value)
		if err != nil {
			t.Fatal(err)
		}
		s.apply(t, store.Edit{Op: store.OpUpdate, Kind: store.KindPart, ID: p.ID, SessionID: s.SessionID,
			MessageID: m.ID, Loc: p.Loc, Before: p.Raw, After: after})
		return p
	}
	t.Fatalf("message %s has no %s part", m.ID, typ)
	return nil
}

// Delete removes a part of the session's message m, the way another
// program would (no backup).
func (s *Store) Delete(t testing.TB, m *store.Message, p *store.Part) {
	t.Helper()
	s.apply(t, store.Edit{Op: store.OpDelete, Kind: store.KindPart, ID: p.ID, SessionID: s.SessionID,
		MessageID: m.ID, Loc: p.Loc, Before: p.Raw})
}

// CorruptSignature is the scenario corrupted-signature: one character of
// the tool call step's reasoning signature changed. It returns the part.
func (s *Store) CorruptSignature(t testing.TB) *store.Part {
	t.Helper()
	m := s.assistant(t, s.Load(t), 0)
	for _, p := range m.Parts {
		if p.Type != "reasoning" {
			continue
		}
		sig := []byte(p.Get("metadata.anthropic.signature").String())
		if len(sig) < 20 {
			t.Fatalf("reasoning %s has no signature to corrupt", p.ID)
		}
		if sig[12] == 'A' {
			sig[12] = 'B'
		} else {
			sig[12] = 'A'
		}
		return s.setPart(t, m, "reasoning", "metadata.anthropic.signature", string(sig))
	}
	t.Fatalf("message %s has no reasoning part", m.ID)
	return nil
}

// WhitespaceText is the scenario whitespace-text: the first turn's answer
// text is whitespace only. It returns the part.
func (s *Store) WhitespaceText(t testing.TB) *store.Part {
	t.Helper()
	return s.setPart(t, s.assistant(t, s.Load(t), 1), "text", "text", " \n\t ")
}

// FailResume stores the failed attempt of a resume the provider rejected
// with text, a minute after the session's last record: the user's
// "continue" and an assistant message with no parts whose error is an
// APIError carrying text.
func (s *Store) FailResume(t testing.TB, text string) {
	t.Helper()
	ses := s.Load(t)
	last := ses.Messages[len(ses.Messages)-1]
	var newest int64
	for _, m := range ses.Messages {
		newest = max(newest, m.Created, m.Get("time.completed").Int())
	}
	created := time.UnixMilli(newest).Add(time.Minute)
	userID, err := store.MintBetween(store.PrefixMessage, last.ID, "", created)
	if err != nil {
		t.Fatal(err)
	}
	started := created.Add(250 * time.Millisecond)
	asstID, err := store.MintBetween(store.PrefixMessage, userID, "", started)
	if err != nil {
		t.Fatal(err)
	}
	partID, err := store.MintBetween(store.PrefixPart, "", "", created)
	if err != nil {
		t.Fatal(err)
	}
	s.Attempt = started.Add(130 * time.Millisecond)
	first := s.assistant(t, ses, 0)
	model := map[string]string{"providerID": first.Get("providerID").String(), "modelID": first.Get("modelID").String()}
	sqlite := filepath.Base(s.Path) == "opencode.db"
	ids := func(kv ...string) []field {
		if sqlite {
			return nil // SQLite rows keep ids in columns
		}
		var out []field
		for i := 0; i < len(kv); i += 2 {
			out = append(out, field{kv[i], kv[i+1]})
		}
		return out
	}
	user := body(sqlite, append(ids("id", userID, "sessionID", s.SessionID),
		field{"role", "user"},
		field{"time", map[string]int64{"created": created.UnixMilli()}},
		field{"agent", "build"},
		field{"model", model})...)
	text2 := body(sqlite, append(ids("id", partID, "sessionID", s.SessionID, "messageID", userID),
		field{"type", "text"}, field{"text", "continue"})...)
	errObj := map[string]any{"name": "APIError", "data": map[string]any{"message": text, "statusCode": 400, "isRetryable": false}}
	asst := body(sqlite, append(ids("id", asstID, "sessionID", s.SessionID),
		field{"role", "assistant"},
		field{"time", map[string]int64{"created": started.UnixMilli(), "completed": s.Attempt.UnixMilli()}},
		field{"error", errObj},
		field{"parentID", userID},
		field{"modelID", model["modelID"]},
		field{"providerID", model["providerID"]},
		field{"mode", "build"},
		field{"agent", "build"},
		field{"path", json.RawMessage(first.Get("path").Raw)},
		field{"cost", 0},
		field{"tokens", map[string]any{"input": 0, "output": 0, "reasoning": 0, "cache": map[string]int{"read": 0, "write": 0}}})...)
	s.apply(t,
		store.Edit{Op: store.OpAdd, Kind: store.KindMessage, ID: userID, SessionID: s.SessionID, After: user, Created: created.UnixMilli()},
		store.Edit{Op: store.OpAdd, Kind: store.KindPart, ID: partID, SessionID: s.SessionID, MessageID: userID, After: text2, Created: created.UnixMilli()},
		store.Edit{Op: store.OpAdd, Kind: store.KindMessage, ID: asstID, SessionID: s.SessionID, After: asst, Created: started.UnixMilli()},
	)
}

type field struct {
	key   string
	value any
}

// body renders fields in order: compact for SQLite, 2-space indented for
// JSON files, as OpenCode writes them.
func body(compact bool, fs ...field) []byte {
	out := []byte("{")
	for i, f := range fs {
		if i > 0 {
			out = append(out, ',')
		}
		k, _ := json.Marshal(f.key)
		v, err := json.Marshal(f.value)
		if err != nil {
			panic(fmt.Sprintf("realstore: %s: %v", f.key, err))
		}
		out = append(append(append(out, k...), ':'), v...)
	}
	out = append(out, '}')
	if compact {
		return out
	}
	var b []byte
	b, _ = json.MarshalIndent(json.RawMessage(out), "", "  ")
	return b
}
