package fix

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

var stShrinkFresh = Strategy{Name: "shrink", Mutations: "shrinkImage+replaceMedia",
	Doc: "re-encode each image the failed request was the first to send to at most a quarter of its base64 (scaled down as needed, within the provider's side limit), " +
		"marked as shrunk by sessfix; the other files it was the first to send (PDFs, images that do not decode or shrink so, images sessfix shrank before) " +
		"are replaced by a text saying what was removed; not applicable when no image shrinks",
	mixed: true}

// freshShrink is the share of its base64 an image the refused request was
// the first to send may keep: each repair at least quarters what the
// files weigh, and an image refused again after its shrink is replaced.
const freshShrink = 4

// shrinkFresh is SF180's first repair: when the session's last attempt
// failed with a request size error, each image its request was the first
// to send (opencode.FreshFiles) is re-encoded to at most a quarter of its
// base64 and marked (opencode.MarkShrunk), so a later check knows the
// session was repaired after the attempt, and a later refusal knows the
// image was shrunk already. The files that do not shrink so (a PDF, an
// image that does not decode, one sessfix shrank before) are replaced by
// placeholders, as replaceFresh replaces them all. When no image shrinks
// the strategy does not apply and replaceFresh follows. The edge's limit
// is not known: the shrunk request may still be refused; then the next
// repair replaces what this one shrank.
func shrinkFresh(s *store.Session, e env) ([]store.Edit, error) {
	m := opencode.LastFailedWith(s, opencode.ErrorRequestTooLarge)
	if m == nil {
		return nil, nil
	}
	files, _ := opencode.FreshFiles(s, m)
	if len(files) == 0 {
		return nil, nil
	}
	_, side := opencode.ImageLimits(s)
	type partFiles struct {
		f       opencode.File
		shrunk  map[int][2]string // attachment (-1: the file part's own) → data, mime
		descs   []string
		replace map[int]bool
	}
	var order []*partFiles
	byPart := map[string]*partFiles{}
	shrunkAny := false
	for _, f := range files {
		pf := byPart[f.MessageID+"/"+f.PartID]
		if pf == nil {
			pf = &partFiles{f: f, shrunk: map[int][2]string{}, replace: map[int]bool{}}
			byPart[f.MessageID+"/"+f.PartID] = pf
			order = append(order, pf)
		}
		if opencode.Unshrunk(f) {
			target := f.Base64 / freshShrink
			out, mime, desc, err := shrinkDataTo(f.Data, target, side, target, e.ms())
			if err == nil && out != "" {
				pf.shrunk[f.Attachment] = [2]string{out, mime}
				pf.descs = append(pf.descs, desc)
				shrunkAny = true
				continue
			}
		}
		pf.replace[f.Attachment] = true
	}
	if !shrunkAny {
		return nil, errNotApplicable
	}
	var out []store.Edit
	for _, pf := range order {
		m, p := s.Message(pf.f.MessageID), opencode.FindPart(s, pf.f.MessageID, pf.f.PartID)
		if m == nil || p == nil {
			return nil, errNotApplicable
		}
		after := p.Raw
		for _, at := range slices.Sorted(maps.Keys(pf.shrunk)) {
			var path []string
			if at >= 0 {
				path = []string{"state", "attachments", strconv.Itoa(at)}
			}
			var err error
			if after, err = setImage(after, path, pf.shrunk[at][0], pf.shrunk[at][1]); err != nil {
				return nil, fmt.Errorf("part %s: %w", p.ID, err)
			}
		}
		what := ""
		if n := len(pf.descs); n == 1 {
			what = "image shrunk from " + pf.descs[0]
		} else if n > 1 {
			what = fmt.Sprintf("%d images shrunk: %s", n, strings.Join(pf.descs, "; "))
		}
		if len(pf.replace) == 0 {
			ed := partEdit(store.OpUpdate, m, p, "shrinkImage", what+", after the provider refused the request that first sent it for its size")
			ed.After = after
			out = append(out, ed)
			continue
		}
		// Some of the part's files are replaced: on the part as shrunk.
		q := *p
		q.Raw = after
		eds, err := replaceParts(s, m, &q, e, func(i int, _, _ string) string {
			if pf.replace[i] {
				return whyRefusedForSize
			}
			return ""
		})
		if err != nil {
			return nil, err
		}
		for i := range eds {
			eds[i].Before = p.Raw
			if what != "" {
				eds[i].Mutation = "shrinkImage+replaceMedia"
				eds[i].Reason = what + "; " + eds[i].Reason
			}
		}
		out = append(out, eds...)
	}
	return out, nil
}
