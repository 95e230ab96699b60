package fix

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

var stPrune = Strategy{Name: "prune", Mutations: "markToolCompacted",
	Doc: "mark the oldest completed tool results that send images compacted, as opencode's own prune does (it then sends `[Old tool result content cleared]` without their images), until the request holds no more images than the provider allows"}

// pruneToolImages is OpenCode's own prune, for a request over the image
// count (the limit is read from the finding's provider error): it sets
// state.time.compacted on the oldest completed tool parts whose images (or
// documents, where the error counts them) the request sends, one after the other, until the request holds at most the
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
	// The tool parts that send images (and documents, where the limit
	// counts them), oldest first, with how many of them each sends.
	type prunable struct {
		n, m              int
		messageID, partID string
	}
	var order []prunable
	count := map[string]int{}
	add := func(n, m int, messageID, partID string) {
		if count[partID] == 0 {
			order = append(order, prunable{n, m, messageID, partID})
		}
		count[partID]++
	}
	for _, im := range ims {
		if im.Tool {
			add(im.N, im.M, im.MessageID, im.PartID)
		}
	}
	excess := len(ims) - limit
	if opencode.CountsDocuments(providerError) {
		for _, f := range opencode.RequestFiles(s, r) {
			if strings.HasPrefix(f.Mime, "image/") {
				continue
			}
			excess++
			if f.Attachment >= 0 {
				add(f.N, f.M, f.MessageID, f.PartID)
			}
		}
		sort.SliceStable(order, func(a, b int) bool {
			return order[a].n < order[b].n || order[a].n == order[b].n && order[a].m < order[b].m
		})
	}
	if excess <= 0 {
		return nil, nil
	}
	var out []store.Edit
	for _, tp := range order {
		if excess <= 0 {
			break
		}
		msg, p := s.Message(tp.messageID), opencode.FindPart(s, tp.messageID, tp.partID)
		if p == nil {
			continue
		}
		id := tp.partID
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
