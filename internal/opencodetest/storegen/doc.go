// Package storegen generates large, realistic OpenCode session stores for
// sessfix's benchmarks and for measuring `sessfix scan` by hand.
//
// A store holds Sessions sessions of Messages messages each. Every turn is a
// user message with one text part followed by three assistant steps, each an
// assistant message of Parts parts shaped like OpenCode 1.x writes them:
// step-start, a signed reasoning part, tool calls (completed, with outputs
// of a few KB) or the final text, and step-finish. A small, fixed share of
// the assistant messages (DefectRate) carries one of the defects sessfix
// reports: an empty text part, reasoning after a tool, unsigned reasoning, a
// tool left running, or a truncated record.
//
// With Images, each session also holds that many images within Anthropic's
// limits (1600×1200 px PNG headers around random bytes, ImageBytes of
// base64 each), half pasted by the user and half returned by the read tool
// as OpenCode 1.1.65 stores them: the image-heavy stores a scan's memory is
// measured on.
//
// Generation is deterministic: the same Config writes the same bytes (ids,
// bodies and SQLite rows), so measurements can be repeated. Sessions are
// generated and written one at a time, so the generator's memory is bounded
// by one session whatever the store's size.
//
// Every shape sessfix reads can be written: the SQLite v1 database (with
// pkg/store/storetest's SchemaV1), the storage/ tree, the project tree, the
// sessions/ layout, and an export file (one session only).
//
// ReadTree and ReadSQLite are the read-only baselines a scan is measured
// against: they read every byte of a store and do nothing with it.
//
// Two commands wrap the package for scripts/bench.sh:
//
//	go run ./internal/opencodetest/storegen/cmd/storegen -shape sqlite -sessions 125 -out /tmp/store
//	go run ./internal/opencodetest/storegen/cmd/readstore /tmp/store/opencode.db
package storegen
