package watch

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/sessfix/sessfix/pkg/store"
)

// ignoredName reports whether a file name is never a record: sessfix's own
// temp files and lock, hidden files, anything but .json.
func ignoredName(name string) bool {
	return strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") || name == ".json"
}

func recordID(name string) string { return strings.TrimSuffix(name, ".json") }

// sessionOf maps a path inside a JSON store (or the export file) to the
// session it belongs to. ok is false for paths that are no record of any
// session. A directory path maps to its session when it is one session's
// directory, and returns ok false when it may hold several (the caller
// scans it instead).
func (ss *storeState) sessionOf(path string, isDir bool) (string, bool) {
	root := ss.root
	switch ss.info.Shape {
	case store.ShapeExport:
		if path == root {
			return ss.exportID, ss.exportID != ""
		}
		return "", false
	case store.ShapeSQLite:
		return "", false
	}
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", false
	}
	c := strings.Split(filepath.ToSlash(rel), "/")
	last := c[len(c)-1]
	if !isDir && ignoredName(last) {
		return "", false
	}
	switch ss.info.Shape {
	case store.ShapeSessions:
		// <sid>/session.json, <sid>/messages/<mid>.json, <sid>/parts/<mid>/<pid>.json
		if len(c) == 1 && !isDir {
			return "", false
		}
		return c[0], true
	case store.ShapeProject:
		// session/info/<sid>.json, session/message/<sid>/..., session/part/<sid>/...
		if len(c) < 3 || c[0] != "session" {
			return "", false
		}
		switch {
		case c[1] == "info" && len(c) == 3 && !isDir:
			return recordID(c[2]), true
		case c[1] == "message" || c[1] == "part":
			return c[2], true
		}
	case store.ShapeStorage:
		// session/<project>/<sid>.json, message/<sid>/<mid>.json, part/<mid>/<pid>.json
		if len(c) < 2 {
			return "", false
		}
		switch c[0] {
		case "session":
			if len(c) == 3 && !isDir {
				return recordID(c[2]), true
			}
		case "message":
			if len(c) == 3 && !isDir {
				ss.msgSession[recordID(c[2])] = c[1]
			}
			return c[1], true
		case "part":
			return ss.sessionOfMessage(c[1])
		}
	}
	return "", false
}

// sessionOfMessage finds the session of a message in a storage/ tree: from
// what the watcher has seen, else by looking for the message file.
func (ss *storeState) sessionOfMessage(mid string) (string, bool) {
	if sid, ok := ss.msgSession[mid]; ok {
		return sid, true
	}
	dirs, err := os.ReadDir(filepath.Join(ss.root, "message"))
	if err != nil {
		return "", false
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		if _, err := os.Lstat(filepath.Join(ss.root, "message", d.Name(), mid+".json")); err == nil {
			ss.msgSession[mid] = d.Name()
			return d.Name(), true
		}
	}
	return "", false
}

// learn remembers which session each message of a loaded session belongs
// to (storage/ trees key part directories by message id only).
func (ss *storeState) learn(s *store.Session) {
	if ss.info.Shape != store.ShapeStorage {
		return
	}
	for _, m := range s.Messages {
		ss.msgSession[m.ID] = s.ID
	}
}

// sqliteName reports whether a file in the database's directory is the
// database or one of its journals.
func (ss *storeState) sqliteName(path string) bool {
	return path == ss.root || path == ss.root+"-wal" || path == ss.root+"-journal"
}
