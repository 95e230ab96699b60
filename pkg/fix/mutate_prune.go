package fix

import (
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

var stPrune = Strategy{Name: "prune", Mutations: "markToolCompacted",
	Doc: "mark the oldest completed tool results that send images compacted, as opencode's own prune does (it then sends `[Old tool result content cleared]` without their images), until the request holds no more images than the provider allows"}

// pruneToolImages is OpenCode's own prune, for a request over the image
// count (the limit is read from the finding's provider error): it sets
// state.time.compacted on the oldest completed tool parts whose images the
// request sends, one after the other, until the request holds at most the
// limit. OpenCode then sends such a result as `[Old tool result content
// cleared]` and leaves its attachments out (OBSERVED.md). Images users
// attached are not touched: when pruning every tool result is not enough,
// the strategy does not apply.
func pruneToolImages(s *store.Session, providerError string, e env) ([]store.Edit, error) {
	limit, ok := opencode.ImageCountLimit(providerError)
	if !ok {
		return nil, errNotApplicable
	}
	r := sent.Build(s, sent.Options{NextPrompt: true})
	ims := opencode.RequestImages(s, r)
	// The tool parts that send images, oldest first, with how many (and
	// how many documents, where the limit counts them).
	var order []opencode.Image // each tool part's first image
	count := map[string]int{}
	for _, im := range ims {
		if !im.Tool {
			continue
		}
		if count[im.PartID] == 0 {
			order = append(order, im)
		}
		count[im.PartID]++
	}
	excess := len(ims) - limit
	if opencode.CountsDocuments(providerError) {
		for _, f := range opencode.RequestFiles(s, r) {
			if strings.HasPrefix(f.Mime, "image/") {
				continue
			}
			excess++
			if f.Attachment >= 0 && count[f.PartID] > 0 {
				count[f.PartID]++
			}
		}
	}
	if excess <= 0 {
		return nil, nil
	}
	var out []store.Edit
	for _, im := range order {
		if excess <= 0 {
			break
		}
		msg, p := s.Message(im.MessageID), opencode.FindPart(s, im.MessageID, im.PartID)
		if p == nil {
			continue
		}
		id := im.PartID
		after, err := setJSON(p.Raw, e.ms(), "state", "time", "compacted")
		if err != nil {
			return nil, fmt.Errorf("part %s: %w", p.ID, err)
		}
		ed := partEdit(store.OpUpdate, msg, p, "markToolCompacted",
			fmt.Sprintf("tool result marked compacted, as opencode's prune does: its %d images (and documents) are no longer sent", count[id]))
		ed.After = after
		out = append(out, ed)
		excess -= count[id]
	}
	if excess > 0 {
		return nil, errNotApplicable
	}
	return out, nil
}
