package fix

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// stRebuild is SF203's repair of a missing session record.
var stRebuild = Strategy{Name: "rebuild", Mutations: "rebuildSessionRecord", Doc: "write the missing session record of a storage tree from its messages, when they say with confidence which project and directory it belongs to"}

// rebuiltRecord is the session record rebuildSessionRecord writes, in the
// key order OpenCode 1.1 writes its own.
type rebuiltRecord struct {
	ID        string      `json:"id"`
	Slug      string      `json:"slug"`
	Version   string      `json:"version"`
	ProjectID string      `json:"projectID"`
	Directory string      `json:"directory"`
	Title     string      `json:"title"`
	Time      rebuiltTime `json:"time"`
}

type rebuiltTime struct {
	Created int64 `json:"created"`
	Updated int64 `json:"updated"`
}

// rebuildSessionRecord adds the missing session record of s, rebuilt from
// its messages (opencode.SessionRecordRebuild). The storage tree files it under
// its project, which the writer takes from the body's projectID.
func rebuildSessionRecord(s *store.Session, opts *scan.Options) ([]store.Edit, error) {
	if s.Info != nil || !s.InfoMissing {
		return nil, errNotApplicable
	}
	return rebuiltRecordEdit(s, opts)
}

// rebuildAfterQuarantine is the rebuilt record that takes the place of b,
// the session's unreadable record, which the plan quarantines: without it
// the session's messages would be left without a record (SF203). None when
// the session keeps another record (b is a duplicate) or cannot be rebuilt
// with confidence; the quarantine is then judged as it is.
func (w *work) rebuildAfterQuarantine(b *store.Record) []store.Edit {
	s := w.s
	if s.Info != nil || !keepsSessionRecords(s.Store.Shape) {
		return nil
	}
	for _, o := range s.Broken {
		if o != b && o.Kind == store.KindSession {
			return nil
		}
	}
	eds, err := rebuiltRecordEdit(s, w.opts.validation())
	if err != nil {
		return nil
	}
	return eds
}

// rebuiltRecordEdit is the edit that adds the session record of s rebuilt
// from its messages.
func rebuiltRecordEdit(s *store.Session, opts *scan.Options) ([]store.Edit, error) {
	var oc *ocenv.Resolver
	if opts != nil {
		oc = opts.OpenCode
	}
	r, why := opencode.SessionRecordRebuild(s, oc)
	if why != "" {
		return nil, fmt.Errorf("cannot rebuild the session record: %s", why)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rebuiltRecord{
		ID: s.ID, Slug: "recovered", Version: "sessfix", ProjectID: r.ProjectID, Directory: r.Directory,
		Title: r.Title, Time: rebuiltTime{r.Created, r.Updated},
	}); err != nil {
		return nil, err
	}
	body := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return []store.Edit{{
		Op: store.OpAdd, Kind: store.KindSession, ID: s.ID, SessionID: s.ID, After: body,
		Created: r.Created, Mutation: "rebuildSessionRecord",
		Reason: "session record rebuilt from its messages: project " + r.ProjectID + ", directory " + r.Directory,
	}}, nil
}
