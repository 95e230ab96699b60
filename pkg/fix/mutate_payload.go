package fix

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

var stMoveOut = Strategy{Name: "move-out", Mutations: "moveOutPayload",
	Doc: "move the part's largest base64 media out of the database into the backup run (payloads/<part id>-<name>, decoded) and put a text naming that file in its place; " +
		"the backup keeps the row whole for undo"}

// moveOutPayload moves the largest base64 media of an oversized part out
// of the store: a user's file part (its url) becomes a synthetic text part
// with the same id naming the file the backup run keeps it in; a tool
// part's attachment leaves state.attachments and its output says where it
// went. The edit's Payload is the media's base64, a slice of the part's
// body (no copy), which the backup run writes decoded before the row is
// changed. A part without base64 media does not apply.
func moveOutPayload(s *store.Session, m *store.Message, p *store.Part, e env) ([]store.Edit, error) {
	type media struct {
		path     string // gjson path of the url
		url      gjson.Result
		filename string
		mime     string
	}
	var best *media
	consider := func(path string, holder gjson.Result) {
		url := holder.Get("url")
		data, ok := opencode.Base64Data(url.String())
		if !ok || (best != nil && len(data) <= len(best.url.Raw)) {
			return
		}
		best = &media{path: path, url: url, filename: holder.Get("filename").String(), mime: holder.Get("mime").String()}
	}
	switch p.Get("type").String() {
	case "file":
		consider("url", gjson.ParseBytes(p.Raw))
	case "tool":
		for i, a := range p.Get("state.attachments").Array() {
			consider("state.attachments."+strconv.Itoa(i)+".url", a)
		}
	}
	if best == nil {
		return nil, errNotApplicable
	}
	payload := base64Slice(p.Raw, best.url)
	if payload == nil {
		return nil, errNotApplicable
	}
	name := store.PayloadName(p.ID + "-" + payloadName(best.filename, best.mime))
	size := base64.StdEncoding.DecodedLen(len(payload))
	kind := "the file"
	if strings.HasPrefix(best.mime, "image/") {
		kind = "the image"
	}
	if best.filename != "" {
		kind += " " + best.filename
	}
	text := fmt.Sprintf("%s%s (%s, about %s) out of this session, because OpenCode could not load a part that large: "+
		"it is payloads/%s in the sessfix backup run of this repair (`sessfix backups` lists the runs; `sessfix undo` puts the part back)]",
		opencode.MediaMovedMark, kind, best.mime, mb(size), name)
	var ed store.Edit
	if best.path == "url" {
		if m.Role != "user" {
			return nil, errNotApplicable
		}
		f := obj().set("type", "text").set("text", text).set("synthetic", true).
			set("time", obj().set("start", e.ms()).set("end", e.ms()))
		ed = partEdit(store.OpUpdate, m, p, "moveOutPayload", "file part's "+mb(size)+" moved into the backup run, a text naming it in its place")
		ed.After = sessionLayout(s).format(newPart(s, m, p.ID, f), "")
	} else {
		i, _ := strconv.Atoi(strings.Split(best.path, ".")[2])
		var keep []gjson.Result
		for k, a := range p.Get("state.attachments").Array() {
			if k != i {
				keep = append(keep, a)
			}
		}
		raws := make([]string, len(keep))
		for k, a := range keep {
			raws[k] = a.Raw
		}
		after, err := setJSON(p.Raw, json.RawMessage("["+strings.Join(raws, ",")+"]"), "state", "attachments")
		if err == nil {
			output := p.Get("state.output").String()
			if output != "" {
				output += "\n\n"
			}
			after, err = setJSON(after, output+text, "state", "output")
		}
		if err != nil {
			return nil, fmt.Errorf("part %s: %w", p.ID, err)
		}
		ed = partEdit(store.OpUpdate, m, p, "moveOutPayload", "tool result's attachment of "+mb(size)+" moved into the backup run, its output naming it")
		ed.After = after
	}
	ed.Payload = &store.Payload{Name: name, Base64: payload}
	return []store.Edit{ed}, nil
}

// base64Slice is the base64 of a data: URL as it sits in raw (url is the
// string's gjson result within raw): a slice, not a copy; nil when the
// string holds escapes or other than base64.
func base64Slice(raw []byte, url gjson.Result) []byte {
	if url.Index <= 0 || url.Index+len(url.Raw) > len(raw) {
		return nil
	}
	s := raw[url.Index+1 : url.Index+len(url.Raw)-1]
	i := strings.IndexByte(string(s[:min(len(s), 256)]), ',')
	if i < 0 {
		return nil
	}
	s = s[i+1:]
	for _, c := range s {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			return nil
		}
	}
	return s
}

// payloadName is the file name moved media get: the part's filename, or
// "media" with an extension from its mime type.
func payloadName(filename, mimeType string) string {
	if filename != "" {
		return filename
	}
	if exts, _ := mime.ExtensionsByType(mimeType); len(exts) > 0 {
		return "media" + exts[len(exts)-1]
	}
	return "media.bin"
}

// mb prints a size in MB (decimal, one digit).
func mb(n int) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
