// Package jsonfs reads and writes the one-file-per-record JSON layouts:
//
//	storage   OpenCode 1.0–1.1: <data>/storage/{session/<project>,message/<session>,part/<message>}/<id>.json
//	project   OpenCode ≤ 0.5:   <data>/project/<slug>/storage/session/{info,message/<session>,part/<session>/<message>}/<id>.json
//	sessions  fixtures and ~/.opencode/sessions: <root>/<session>/{session.json,messages/<id>.json,parts/<message>/<id>.json}
//
// Reading is confined to the store's directory (a symlink is followed only
// when it resolves inside it) and each record file is read with one
// bounded read (internal/recordfile); a file that cannot be used is a
// Broken record naming it. The writer replaces each file atomically
// (internal/atomicfile), never writes through a symlinked directory, and
// puts back every file it changed when a later step of a change set fails.
//
// Storage, Project and Sessions are its entries in the shapes registry.
package jsonfs
