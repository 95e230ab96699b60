// Package export reads and writes `opencode export` files: one session in
// one JSON document, {"info": Session, "messages": [{"info": Message,
// "parts": [Part, ...]}, ...]}.
//
// Records are the exact bytes of each object inside the file, located by
// line. The writer splices every edit into the document in memory, keeping
// every byte outside the edited objects (indentation and CRLF line endings
// included), then replaces the whole file atomically (internal/atomicfile).
//
// Shape is its entry in the shapes registry.
package export
