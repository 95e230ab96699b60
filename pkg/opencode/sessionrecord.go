package opencode

import (
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/store"
)

// RebuiltTitleFallback is the title of a rebuilt session record whose
// messages hold no user text.
const RebuiltTitleFallback = "Recovered session (sessfix)"

// rebuiltTitleRunes caps a rebuilt title taken from the first prompt.
const rebuiltTitleRunes = 60

// RebuiltSession is what a missing session record of the 1.0–1.1 storage
// tree is rebuilt from: the facts its messages and the store's project
// records give with confidence.
type RebuiltSession struct {
	// ProjectID is the project the record is filed under
	// (storage/session/<ProjectID>/<id>.json) and Directory the directory
	// the session ran in.
	ProjectID, Directory string
	// Title is the first line of the first prompt cut short, or
	// RebuiltTitleFallback.
	Title string
	// Created and Updated are the first message's creation and the latest
	// time any message records, in epoch milliseconds.
	Created, Updated int64
}

// SessionRecordRebuild says how the missing session record of s can be
// rebuilt, or why it cannot be with confidence (why is then not empty).
// Only the storage tree is rebuilt: OpenCode 1.1 reads a session's record
// from storage/session/<project>/ of the project its directory resolves
// to, and its assistant messages record both (path.cwd is the session's
// directory, path.root its project's worktree). The project is the one
// whose worktree is path.root: "global" for "/" (directories outside git),
// else the single project record with that worktree; when OpenCode's
// project cache resolves the directory here, it must agree.
func SessionRecordRebuild(s *store.Session, oc *ocenv.Resolver) (r RebuiltSession, why string) {
	if s.Store.Shape != store.ShapeStorage {
		return r, "sessfix rebuilds session records only in the OpenCode 1.0–1.1 storage tree"
	}
	if len(s.Messages) == 0 {
		return r, "the session has no readable message to rebuild it from"
	}
	dir, ok := oneValue(s, "path.cwd")
	if !ok {
		return r, dir
	}
	root, ok := oneValue(s, "path.root")
	if !ok {
		return r, root
	}
	var ids []string
	if root == "/" {
		ids = append(ids, ocenv.GlobalProject)
	}
	for _, p := range s.Projects {
		if p.Worktree == root && (len(ids) == 0 || ids[0] != p.ID) {
			ids = append(ids, p.ID)
		}
	}
	switch len(ids) {
	case 0:
		return r, "no project record of the store has its worktree " + root
	case 1:
	default:
		return r, "more than one project record has its worktree " + root + " (" + strings.Join(ids, ", ") + ")"
	}
	if oc != nil {
		if res := oc.Project(dir); res.ID != "" && res.ID != ids[0] {
			return r, "its worktree " + root + " is project " + ids[0] + ", but opencode resolves its directory " + dir + " to project " + res.ID
		}
	}
	r = RebuiltSession{ProjectID: ids[0], Directory: dir, Title: rebuiltTitle(s), Created: s.Messages[0].Created}
	for _, m := range s.Messages {
		if m.Created > 0 && (r.Created <= 0 || m.Created < r.Created) {
			r.Created = m.Created
		}
		r.Updated = max(r.Updated, m.Created, m.Get("time.completed").Int())
	}
	if r.Created <= 0 {
		return RebuiltSession{}, "no message records when it was created"
	}
	return r, ""
}

// oneValue is the one string the assistant messages of s hold at key;
// when they hold none or disagree, ok is false and the value says why.
func oneValue(s *store.Session, key string) (v string, ok bool) {
	for _, m := range s.Messages {
		got := m.Get(key)
		if m.Role != "assistant" || got.Type != gjson.String || got.Str == "" {
			continue
		}
		if v != "" && got.Str != v {
			return "its assistant messages disagree on " + key + " (" + v + ", " + got.Str + ")", false
		}
		v = got.Str
	}
	if v == "" {
		return "no assistant message records " + key, false
	}
	return v, true
}

// rebuiltTitle is the first non-empty line of the first user message's
// text, spaces collapsed and cut to rebuiltTitleRunes runes, so the user
// knows the session again in the list; RebuiltTitleFallback when no user
// message holds text.
func rebuiltTitle(s *store.Session) string {
	for _, m := range s.Messages {
		if m.Role != "user" {
			continue
		}
		for _, p := range m.Parts {
			if p.Type != "text" || p.Get("synthetic").Bool() {
				continue
			}
			for _, line := range strings.Split(p.Get("text").String(), "\n") {
				line = strings.Join(strings.Fields(line), " ")
				if line == "" {
					continue
				}
				if utf8.RuneCountInString(line) > rebuiltTitleRunes {
					line = string([]rune(line)[:rebuiltTitleRunes-1]) + "…"
				}
				return line
			}
		}
	}
	return RebuiltTitleFallback
}
