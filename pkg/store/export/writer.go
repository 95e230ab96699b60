package export

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/sessfix/sessfix/internal/atomicfile"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/tidwall/gjson"
)

// exportWriter rewrites an `opencode export` file: every edit is spliced
// into the document in memory (every byte outside the edited objects is
// kept), then the whole file is replaced atomically. New and edited objects
// are indented like their neighbours (2 spaces per level, as `opencode
// export` writes them); a compact file stays compact.
type exportWriter struct {
	info store.Info // Path made absolute: the backup records it, and undo may run elsewhere
	ops  atomicfile.Ops
	seen store.Listing
	// planned is the last document Planned rendered, which Apply writes
	// when it is asked to apply the same change set to the same bytes: a
	// large file is spliced once per run, not twice.
	planned *rendered
}

// rendered is a change set spliced into a document.
type rendered struct {
	cs   *store.ChangeSet
	from string // the hash of the document it was spliced into
	d    *document
	locs map[int]store.Location
}

func newExportWriter(info store.Info, ops atomicfile.Ops) *exportWriter {
	if abs, err := filepath.Abs(info.Path); err == nil {
		info.Path = abs
	}
	return &exportWriter{info: info, ops: ops}
}

func (w *exportWriter) Close() error { return nil }

func (w *exportWriter) Targets(_ context.Context, cs *store.ChangeSet) ([]store.Target, error) {
	if err := cs.Check(); err != nil {
		return nil, err
	}
	if cs.Empty() {
		return nil, nil
	}
	targets := []store.Target{{Path: w.info.Path}}
	w.seen.Remember(cs, targets)
	return targets, nil
}

func (w *exportWriter) Read(_ context.Context, targets []store.Target) ([]store.Image, error) {
	out := make([]store.Image, 0, len(targets))
	for _, t := range targets {
		data, mode, exists, err := atomicfile.ReadRegular(w.ops, t.Path)
		if err != nil {
			return nil, err
		}
		out = append(out, store.Image{Target: t, Exists: exists, Mode: mode, Data: data})
	}
	w.seen.Saw(out)
	return out, nil
}

func (w *exportWriter) Restore(ctx context.Context, images []store.Image) error {
	for _, im := range images {
		if im.Path != w.info.Path {
			return fmt.Errorf("cannot restore %s: it is not the export file %s", im.Path, w.info.Path)
		}
	}
	if err := store.CheckExpected(ctx, w.Read, images); err != nil {
		return err
	}
	for _, im := range images {
		var err error
		if im.Exists {
			err = atomicfile.WriteMode(w.ops, im.Path, im.Data, im.Mode, nil)
		} else {
			err = atomicfile.Remove(w.ops, im.Path)
		}
		if err != nil {
			return store.WriteFailed(err, true)
		}
	}
	return nil
}

func (w *exportWriter) Apply(ctx context.Context, cs *store.ChangeSet) error {
	if err := cs.Check(); err != nil {
		return err
	}
	if cs.Empty() {
		return nil
	}
	file, _, exists, err := atomicfile.ReadRegular(w.ops, w.info.Path)
	if err != nil {
		return err
	}
	if !exists && !creates(cs) {
		return store.Changed(w.info.Path, store.KindSession, cs.SessionID, "was removed")
	}
	// The whole file is the backup's one image: a message delete takes its
	// parts along with no Before bytes of their own, so any change since
	// the backup refuses the change set.
	if err := w.seen.Changed(cs, []store.Image{{Target: store.Target{Path: w.info.Path}, Exists: exists, Data: file}}); err != nil {
		return err
	}
	doc, enc, err := w.text(file)
	if err != nil {
		return err
	}
	var (
		d    *document
		locs map[int]store.Location
	)
	if r := w.planned; r != nil && r.cs == cs && r.from == store.HashBytes(file) {
		d, locs = r.d, r.locs
	} else if d, locs, err = w.render(ctx, doc, cs); err != nil {
		return err
	}
	w.planned = nil
	out, err := enc.encode(d.b)
	if err != nil {
		return fmt.Errorf("rewriting %s: %w; nothing was written (please report this)", w.info.Path, err)
	}
	atomicfile.CleanTempsOf(w.ops, w.info.Path)
	if err := atomicfile.Write(w.ops, w.info.Path, out, 0o644, nil); err != nil {
		return store.WriteFailed(fmt.Errorf("%w; the export file was left as it was", err), true)
	}
	for i, l := range locs {
		cs.Edits[i].Loc = l
	}
	return nil
}

// Planned is the file as Apply would write it, with the spans where it
// differs from before: a splice of every edit into the document.
func (w *exportWriter) Planned(ctx context.Context, cs *store.ChangeSet, before []store.Image) ([]store.Image, error) {
	if err := cs.Check(); err != nil {
		return nil, err
	}
	out := make([]store.Image, len(before))
	for i, im := range before {
		if im.Path != w.info.Path {
			return nil, fmt.Errorf("cannot plan %s: it is not the export file %s", im.Path, w.info.Path)
		}
		out[i] = store.Image{Target: im.Target, Exists: im.Exists, Mode: im.Mode, Data: im.Data}
		if cs.Empty() || !im.Exists && !creates(cs) {
			continue
		}
		out[i].Exists = true
		if !im.Exists {
			out[i].Mode = 0o644
		}
		doc, enc, err := w.text(im.Data)
		if err != nil {
			return nil, err
		}
		d, locs, err := w.render(ctx, doc, cs)
		if err != nil {
			return nil, err
		}
		if out[i].Data, err = enc.encode(d.b); err != nil {
			return nil, fmt.Errorf("rewriting %s: %w; nothing was written (please report this)", w.info.Path, err)
		}
		// The spans are offsets in the text, which are the file's own
		// offsets unless the file is UTF-16: its backup keeps it whole.
		if !enc.utf16 {
			out[i].Spans = d.spans
		}
		w.planned = &rendered{cs: cs, from: im.Hash(), d: d, locs: locs}
	}
	return out, nil
}

// text is the export file's text (see decode) and its encoding, which the
// writer writes back; a file whose text would not encode back to the same
// bytes is refused.
func (w *exportWriter) text(file []byte) ([]byte, encoding, error) {
	doc, enc, err := decode(file)
	if err == nil {
		err = enc.checkRoundTrip(w.info.Path, file, doc)
	} else {
		err = fmt.Errorf("cannot rewrite %s: %w; nothing was written", w.info.Path, err)
	}
	return doc, enc, err
}

// render splices every edit of cs into doc, and returns the new document
// with the spans it changed, and the locations of the records it created
// (by edit).
func (w *exportWriter) render(ctx context.Context, doc []byte, cs *store.ChangeSet) (*document, map[int]store.Location, error) {
	d := &document{b: doc}
	locs := map[int]store.Location{}
	for i := range cs.Edits {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		at, err := w.edit(d, &cs.Edits[i])
		if err != nil {
			return nil, nil, err
		}
		if at >= 0 {
			locs[i] = store.Location{Path: w.info.Path, Line: bytes.Count(d.b[:at], []byte("\n")) + 1}
		}
	}
	if !gjson.ValidBytes(d.b) {
		return nil, nil, fmt.Errorf("rewriting %s produced invalid JSON; nothing was written (please report this)", w.info.Path)
	}
	return d, locs, nil
}

// located is a record found in the document.
type located struct {
	elem  gjson.Result // the array element (a message's {"info","parts"} or a part)
	obj   gjson.Result // the record's own object (a message's info, or elem)
	arr   gjson.Result // the array holding elem
	index int          // elem's position in arr
}

func (w *exportWriter) messages(doc []byte) (gjson.Result, error) {
	msgs := gjson.GetBytes(doc, "messages")
	if !msgs.IsArray() {
		return msgs, fmt.Errorf("%s is not an opencode export file (no messages array)", w.info.Path)
	}
	return msgs, nil
}

func (w *exportWriter) findMessage(doc []byte, id string) (located, bool, error) {
	msgs, err := w.messages(doc)
	if err != nil {
		return located{}, false, err
	}
	// ForEach, not Array: the walk stops at the message, and a large file
	// is not split into every element for each edit.
	loc, found, i := located{arr: msgs}, false, 0
	msgs.ForEach(func(_, m gjson.Result) bool {
		if m.Get("info.id").Str == id {
			loc, found = located{elem: m, obj: m.Get("info"), arr: msgs, index: i}, true
			return false
		}
		i++
		return true
	})
	return loc, found, nil
}

func (w *exportWriter) findPart(doc []byte, messageID, id string) (located, bool, error) {
	msgs, err := w.messages(doc)
	if err != nil {
		return located{}, false, err
	}
	var loc located
	found := false
	for pass := 0; pass < 2 && !found; pass++ {
		msgs.ForEach(func(_, m gjson.Result) bool {
			if pass == 0 && messageID != "" && m.Get("info.id").Str != messageID {
				return true
			}
			parts, j := m.Get("parts"), 0
			parts.ForEach(func(_, p gjson.Result) bool {
				if p.Get("id").Str == id {
					loc, found = located{elem: p, obj: p, arr: parts, index: j}, true
					return false
				}
				j++
				return true
			})
			// The message named holds its parts: the first pass ends there.
			return !found && (pass == 1 || messageID == "")
		})
		if messageID == "" {
			break
		}
	}
	return loc, found, nil
}

// edit applies one edit to the document and returns, for a created
// object, its byte offset (else -1).
func (w *exportWriter) edit(d *document, e *store.Edit) (int, error) {
	doc := d.b
	where := w.info.Path
	var (
		loc   located
		found bool
		err   error
	)
	switch e.Kind {
	case store.KindSession:
		if e.Op == store.OpAdd {
			if len(doc) > 0 {
				return -1, fmt.Errorf("cannot create session %s in %s: the file exists, and sessfix writes a new session only to a new export file; nothing was written", e.ID, where)
			}
			d.b = newDocument(e.After)
			return 0, nil
		}
		if e.Op != store.OpUpdate {
			return -1, fmt.Errorf("%s session %s: only updates of the session info are supported in export files", e.Op, e.ID)
		}
		info := gjson.GetBytes(doc, "info")
		loc, found = located{elem: info, obj: info}, info.IsObject() && info.Get("id").Str == e.ID
	case store.KindMessage:
		loc, found, err = w.findMessage(doc, e.ID)
	case store.KindPart:
		loc, found, err = w.findPart(doc, e.MessageID, e.ID)
	}
	if err != nil {
		return -1, err
	}
	if e.Op == store.OpAdd {
		if found {
			return -1, fmt.Errorf("cannot add %s %s to %s: it already holds that id; nothing was written", e.Kind, e.ID, where)
		}
		return w.add(d, e, e.ID, e.After)
	}
	if !found {
		return -1, store.Changed(where, e.Kind, e.ID, "was removed")
	}
	if err := checkSpan(doc, loc.obj); err != nil {
		return -1, fmt.Errorf("%s %s in %s: %w", e.Kind, e.ID, where, err)
	}
	target := loc.obj
	switch {
	case bytes.Equal([]byte(loc.obj.Raw), e.Before), e.Op == store.OpQuarantine && e.Before == nil:
	case e.Kind == store.KindMessage && bytes.Equal([]byte(loc.elem.Raw), e.Before):
		target = loc.elem // a reader that keeps the whole {"info","parts"} element
	default:
		return -1, store.Changed(where, e.Kind, e.ID, "was modified")
	}
	switch e.Op {
	case store.OpUpdate:
		d.splice(target.Index, target.Index+len(target.Raw), reindent(doc, target.Index, e.After))
		return -1, nil
	case store.OpDelete, store.OpQuarantine:
		if e.Kind == store.KindSession {
			return -1, fmt.Errorf("cannot delete the session info of %s", where)
		}
		// A message goes with its parts.
		d.removeElem(loc.arr, loc.index)
		return -1, nil
	case store.OpRekey:
		body, err := e.RekeyedBody([]byte(loc.obj.Raw))
		if err != nil {
			return -1, fmt.Errorf("re-key %s %s: %w", e.Kind, e.ID, err)
		}
		if found, err := w.idTaken(doc, e); err != nil || found {
			if err == nil {
				err = fmt.Errorf("cannot re-key %s %s in %s: %s already exists; nothing was written", e.Kind, e.ID, where, e.NewID)
			}
			return -1, err
		}
		if e.Kind == store.KindPart {
			// Re-keying moves a part to where its new id sorts.
			d.removeElem(loc.arr, loc.index)
			return w.add(d, e, e.NewID, body)
		}
		return -1, w.rekeyMessage(d, loc, body)
	}
	return -1, fmt.Errorf("unknown operation %q", e.Op)
}

func (w *exportWriter) idTaken(doc []byte, e *store.Edit) (bool, error) {
	if e.Kind == store.KindMessage {
		_, ok, err := w.findMessage(doc, e.NewID)
		return ok, err
	}
	_, ok, err := w.findPart(doc, "", e.NewID)
	return ok, err
}

// rekeyMessage replaces a message's info with body. Its parts stay in
// place; the planner's part updates that follow rewrite their messageID.
func (w *exportWriter) rekeyMessage(d *document, loc located, body []byte) error {
	info := loc.elem.Get("info")
	if err := checkSpan(d.b, info); err != nil {
		return err
	}
	d.splice(info.Index, info.Index+len(info.Raw), reindent(d.b, info.Index, body))
	return nil
}

// add inserts a new message or part where OpenCode's order puts it: parts
// by id, messages by (time.created, id).
func (w *exportWriter) add(d *document, e *store.Edit, id string, body []byte) (int, error) {
	doc := d.b
	switch e.Kind {
	case store.KindPart:
		m, ok, err := w.findMessage(doc, e.MessageID)
		if err != nil {
			return -1, err
		}
		if !ok {
			return -1, store.Changed(w.info.Path, store.KindMessage, e.MessageID, "was removed")
		}
		parts := m.elem.Get("parts")
		if !parts.IsArray() {
			return -1, fmt.Errorf("message %s in %s has no parts array", e.MessageID, w.info.Path)
		}
		elems := parts.Array()
		k := len(elems)
		for j, p := range elems {
			if p.Get("id").Str > id {
				k = j
				break
			}
		}
		return d.insertElem(parts, k, body), nil
	case store.KindMessage:
		msgs, err := w.messages(doc)
		if err != nil {
			return -1, err
		}
		created := gjson.GetBytes(body, "time.created").Int()
		if created == 0 {
			created = e.Created
		}
		elems := msgs.Array()
		k := len(elems)
		for j, m := range elems {
			c := m.Get("info.time.created").Int()
			if c > created || c == created && m.Get("info.id").Str > id {
				k = j
				break
			}
		}
		var elem bytes.Buffer
		elem.WriteString(`{"info":`)
		elem.Write(body)
		elem.WriteString(`,"parts":[]}`)
		return d.insertElem(msgs, k, elem.Bytes()), nil
	}
	return -1, fmt.Errorf("cannot add %s %s to an export file", e.Kind, e.ID)
}

// creates reports whether cs writes a new export file: its first edit adds
// the session (sessfix fork), the messages and parts that follow fill it.
func creates(cs *store.ChangeSet) bool {
	return !cs.Empty() && cs.Edits[0].Op == store.OpAdd && cs.Edits[0].Kind == store.KindSession
}

// newDocument is a new export file holding the session record info and no
// message yet, formatted as `opencode export` writes: 2-space indents, a
// final newline.
func newDocument(info []byte) []byte {
	var b bytes.Buffer
	b.WriteString("{\n  \"info\": ")
	b.Write(reindentAt(info, "  ", true))
	b.WriteString(",\n  \"messages\": []\n}\n")
	return b.Bytes()
}

// checkSpan makes sure a gjson result's Index points at its bytes.
func checkSpan(doc []byte, r gjson.Result) error {
	if r.Raw == "" || r.Index < 0 || r.Index+len(r.Raw) > len(doc) || string(doc[r.Index:r.Index+len(r.Raw)]) != r.Raw {
		return fmt.Errorf("cannot locate the record's bytes in the document")
	}
	return nil
}

// document is an export file being edited: its bytes, and the spans where
// they differ from the file as read.
type document struct {
	b     []byte
	spans []store.Span
}

// splice replaces d.b[start:end] with with, and records the change in
// d.spans. In a document whose lines end in CRLF (an export saved on
// Windows), the line breaks of with get the CR too: valid JSON has line
// breaks only between values, never inside a string, so only whitespace
// changes.
func (d *document) splice(start, end int, with []byte) {
	if i := bytes.IndexByte(d.b, '\n'); i > 0 && d.b[i-1] == '\r' {
		with = crlf(with)
	}
	d.record(start, end, len(with))
	out := make([]byte, 0, len(d.b)-(end-start)+len(with))
	out = append(out, d.b[:start]...)
	out = append(out, with...)
	d.b = append(out, d.b[end:]...)
}

// record merges the splice of d.b[start:end] by n new bytes into d.spans,
// before d.b changes: spans the splice overlaps or touches become one,
// whose Old is their Old bytes with the unchanged bytes between them (the
// bytes outside every span are the file's own), and the spans after it
// move by the change in length.
func (d *document) record(start, end, n int) {
	lo, hi := start, end
	first, last := len(d.spans), -1
	for i, sp := range d.spans {
		if sp.At <= end && sp.At+sp.Len >= start {
			if first > i {
				first = i
			}
			last = i
			lo, hi = min(lo, sp.At), max(hi, sp.At+sp.Len)
		}
	}
	var old []byte
	pos := lo
	for i := first; i <= last; i++ {
		sp := d.spans[i]
		old = append(old, d.b[pos:sp.At]...)
		old = append(old, sp.Old...)
		pos = sp.At + sp.Len
	}
	old = append(old, d.b[pos:hi]...)
	merged := store.Span{At: lo, Len: hi - lo - (end - start) + n, Old: old}
	delta := n - (end - start)
	var out []store.Span
	placed := false
	for i, sp := range d.spans {
		if i >= first && i <= last {
			continue
		}
		if sp.At > hi {
			if !placed {
				out, placed = append(out, merged), true
			}
			sp.At += delta
		}
		out = append(out, sp)
	}
	if !placed {
		out = append(out, merged)
	}
	d.spans = out
}

// crlf gives every bare LF in b a CR.
func crlf(b []byte) []byte {
	if bytes.IndexByte(b, '\n') < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+bytes.Count(b, []byte("\n")))
	for i, c := range b {
		if c == '\n' && (i == 0 || b[i-1] != '\r') {
			out = append(out, '\r')
		}
		out = append(out, c)
	}
	return out
}

// lineIndent returns the whitespace that starts the line holding pos, and
// whether pos is the first non-blank byte of its line (a pretty-printed
// document). A compact document has no line structure to follow.
func lineIndent(doc []byte, pos int) (string, bool) {
	i := pos
	for i > 0 && doc[i-1] != '\n' {
		i--
	}
	j := i
	for j < len(doc) && (doc[j] == ' ' || doc[j] == '\t') {
		j++
	}
	if i == 0 && bytes.IndexByte(doc, '\n') < 0 {
		return "", false
	}
	return string(doc[i:j]), true
}

// reindent formats body for a value that starts at pos in doc: indented
// two spaces per level from pos's line, or compact in a compact document.
func reindent(doc []byte, pos int, body []byte) []byte {
	indent, pretty := lineIndent(doc, pos)
	return reindentAt(body, indent, pretty)
}

// insertElem inserts body as element k of arr and returns the offset where
// the new element starts.
func (d *document) insertElem(arr gjson.Result, k int, body []byte) int {
	doc := d.b
	elems := arr.Array()
	_, pretty := lineIndent(doc, arr.Index)
	nl := ""
	if pretty {
		nl = "\n"
	}
	switch {
	case len(elems) == 0:
		outer, _ := lineIndent(doc, arr.Index)
		ind := ""
		if pretty {
			ind = outer + "  "
		}
		b := reindentAt(body, ind, pretty)
		text := "[" + nl + ind + string(b) + nl + outer + "]"
		if !pretty {
			text = "[" + string(b) + "]"
		}
		d.splice(arr.Index, arr.Index+len(arr.Raw), []byte(text))
		return arr.Index + 1 + len(nl) + len(ind)
	case k < len(elems):
		at := elems[k].Index
		ind, _ := lineIndent(doc, at)
		if !pretty {
			ind = ""
		}
		text := string(reindentAt(body, ind, pretty)) + "," + nl + ind
		d.splice(at, at, []byte(text))
		return at
	default:
		last := elems[len(elems)-1]
		end := last.Index + len(last.Raw)
		ind, _ := lineIndent(doc, last.Index)
		if !pretty {
			ind = ""
		}
		text := "," + nl + ind + string(reindentAt(body, ind, pretty))
		d.splice(end, end, []byte(text))
		return end + 1 + len(nl) + len(ind)
	}
}

func reindentAt(body []byte, indent string, pretty bool) []byte {
	var buf bytes.Buffer
	var err error
	if pretty {
		err = json.Indent(&buf, body, indent, "  ")
	} else {
		err = json.Compact(&buf, body)
	}
	if err != nil {
		return body
	}
	return buf.Bytes()
}

// removeElem removes element k of arr with its separator.
func (d *document) removeElem(arr gjson.Result, k int) {
	elems := arr.Array()
	switch {
	case len(elems) == 1:
		d.splice(arr.Index, arr.Index+len(arr.Raw), []byte("[]"))
	case k > 0:
		prevEnd := elems[k-1].Index + len(elems[k-1].Raw)
		end := elems[k].Index + len(elems[k].Raw)
		d.splice(prevEnd, end, nil)
	default:
		d.splice(elems[0].Index, elems[1].Index, nil)
	}
}

var _ store.Writer = (*exportWriter)(nil)
