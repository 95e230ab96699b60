package scan

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// Resolved reports whether the problem the error r describes is gone from the
// session, and why, deciding from the records alone (never from file
// times, which a copy, a restore or a checkout resets). found are the
// session's findings under every rule but SF302.
//
// For an error with a mapped index, the problem is gone when sessfix
// excluded the target message, or when nothing at error level is found on
// it, it no longer shows the defect the error describes (Defect.Shows) and
// its records show it was changed after the failed attempt:
//   - a time inside the message or its parts (time.created,
//     time.completed, time.start, time.end of the part or its tool state)
//     later than the failed attempt's own time.completed (else
//     time.created); compaction times do not count, since OpenCode sets
//     them without repairing anything;
//   - a part marked synthetic (sessfix's placeholder text, injected text
//     and thinking);
//   - for the thinking errors, no thinking left on the message;
//   - for an error that names the block it found ("… found `tool_use`"),
//     another block at that index once the request is rebuilt.
//
// Without a stored failed attempt (a pasted error) there is no "since":
// the target no longer showing the defect is enough.
//
// For an error that names no message, the whole history before the failed
// attempt is the target: the problem is gone when nothing of the error's
// class is found at error level (ExplainsError) and some message before the
// attempt was changed after it in one of the ways above (a synthetic part
// counting on assistant messages only), or excluded by sessfix. A pasted
// error that names no message is never known to be gone: nothing tells when
// it happened.
//
// For a defect the records hold (DefectReasoningMissing and the ones after
// it), the records are the evidence: the problem is gone when nothing at
// error level predicts the error's type and no message shows the defect
// any more (for a session-wide defect, no message before the attempt; else
// the one the error names).
//
// oc (nil for none) is OpenCode's model data, read for the model's context
// window when a context-window error prints none (the Responses API's
// "Your input exceeds the context window of this model").
func Resolved(r *opencode.Recovery, s *store.Session, found []Finding, oc *ocenv.Resolver) (string, bool) {
	if r.Defect.InRecords() {
		return resolvedInRecords(r, s, found)
	}
	if !r.Names() {
		for _, g := range found {
			if g.Severity == Error && ExplainsError(g, r.Type) {
				return "", false
			}
		}
		if how := imageCountWithin(r, s); how != "" {
			return how, true
		}
		if how := pdfPagesWithin(r, s); how != "" {
			return how, true
		}
		if how := contextWithin(r, s, oc); how != "" {
			return how, true
		}
		if how := mediaReplaced(r, s); how != "" {
			return how, true
		}
		if how := repairedSince(r, s); how != "" {
			return how, true
		}
		return "", false
	}
	if r.TargetID == "" {
		return "", false
	}
	m := s.Message(r.TargetID)
	if m == nil {
		return "", false
	}
	if sent.ExcludedBySessfix(m) {
		return "sessfix has excluded that message from requests since", true
	}
	for _, g := range found {
		if g.Severity == Error && g.Code != SF302 && g.MessageID == m.ID {
			return "", false
		}
	}
	if r.Defect.Shows(s, m) {
		return "", false
	}
	if r.Failed == nil {
		return "that message does not show the problem now", true
	}
	if r.Defect.ThinkingDefect() && len(opencode.ThinkingParts(m)) == 0 {
		return "that message's thinking has been removed since", true
	}
	if how := r.Changed(m, true); how != "" {
		return "that message has been changed since (" + how + ") and no longer shows the problem", true
	}
	if how := imageWithinLimits(r, s); how != "" {
		return how, true
	}
	if found := opencode.FoundType(r.Text); found != "" {
		if ix, ok := sent.ParseIndex(r.Index); ok && ix.M >= 0 {
			n, k, req := ix.Entry(), ix.M, r.Request(s)
			if n < len(req.Messages) && (k >= len(req.Messages[n].Blocks) || req.Messages[n].Blocks[k].Type != found) {
				return fmt.Sprintf("%s is no longer the `%s` block the provider found there", r.Index, found), true
			}
		}
	}
	return "", false
}

func resolvedInRecords(r *opencode.Recovery, s *store.Session, found []Finding) (string, bool) {
	for _, g := range found {
		if g.Severity == Error && g.Code != SF302 && g.ErrorType == string(r.Type) {
			return "", false
		}
	}
	if r.Defect.SessionWide() {
		until := ""
		if r.Failed != nil {
			until = r.Failed.ID
		}
		if len(r.Showing(s, until)) > 0 {
			return "", false
		}
		return r.Defect.GoneWhy(), true
	}
	m := s.Message(r.TargetID)
	switch {
	case m == nil:
		return "", false
	case sent.ExcludedBySessfix(m):
		return "sessfix has excluded that message from requests since", true
	case r.Defect.Shows(s, m):
		return "", false
	}
	return r.Defect.GoneWhy(), true
}

// ErrorCauses returns the findings of fs that produce a provider error
// naming no message: the preflight findings (and SF210's) at error level whose predicted
// text is the error's (backticks, case and a trailing documentation link
// aside), else those predicting its error type.
func ErrorCauses(fs []Finding, text string) []Finding {
	t := opencode.DetectErrorType(text)
	if t == opencode.ErrorNone {
		return nil
	}
	want := normErrorText(text)
	var exact, typed []Finding
	for _, f := range fs {
		if f.Severity != Error || !predictsError(f.Code) || f.ErrorType != string(t) {
			continue
		}
		typed = append(typed, f)
		if normErrorText(f.ProviderError) == want {
			exact = append(exact, f)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return typed
}

// MarkedRules are the codes of the rules an error is recognised as by
// their marks (Rule.Marks), in registry order, when it is of no provider
// error class (opencode.DetectErrorType): OpenCode's own errors, such as
// SF213's ProviderModelNotFoundError. None for an error of a class.
func MarkedRules(text string) []string {
	if opencode.DetectErrorType(text) != opencode.ErrorNone {
		return nil
	}
	t := strings.ToLower(text)
	var out []string
	for _, r := range registry {
		if slices.ContainsFunc(r.Marks, func(m string) bool { return strings.Contains(t, m) }) {
			out = append(out, r.Code)
		}
	}
	return out
}

// MarkedCauses are the findings of fs of the rules codes (an error's
// MarkedRules).
func MarkedCauses(fs []Finding, codes []string) []Finding {
	if len(codes) == 0 {
		return nil
	}
	var out []Finding
	for _, f := range fs {
		if slices.Contains(codes, f.Code) {
			out = append(out, f)
		}
	}
	return out
}

// MarkedNoneNote says that an error is the one the rules codes report
// (MarkedRules) but the session has no finding of them.
func MarkedNoneNote(codes []string) string {
	return "the error is the one " + strings.Join(codes, " or ") + " reports, and sessfix finds none of it in the session"
}

// predictsError reports a rule whose findings predict the provider's error
// from the request OpenCode would send: the preflight rules, and SF210
// (a history that begins with an assistant message).
func predictsError(code string) bool { return IsPreflightCode(code) || code == SF210 }

// IsPreflightCode reports a preflight rule's code (SF150–SF169, and
// SF170–SF189 for the limits on a request's size).
func IsPreflightCode(code string) bool {
	return FamilyPreflight.Has(code) || FamilyRequestSize.Has(code)
}

var docsTailRe = regexp.MustCompile(`\s*(please consult our documentation at )?https?://\S+\s*$`)

func normErrorText(s string) string {
	s = strings.ToLower(strings.ReplaceAll(s, "`", ""))
	return strings.TrimSpace(docsTailRe.ReplaceAllString(strings.TrimSpace(s), ""))
}

// DescribeCauses names the places ErrorCauses found, for one line of text:
// "message msg_… part prt_… (SF151), …".
func DescribeCauses(fs []Finding) string {
	var out []string
	for _, f := range fs {
		s := "message " + f.MessageID
		if f.MessageID == "" {
			s = "the session"
		}
		if f.PartID != "" {
			s += " part " + f.PartID
		}
		out = append(out, s+" ("+f.Code+")")
	}
	return strings.Join(out, ", ")
}

// CausesNote is what sessfix says about an error that names no message:
// "the error names no message; the preflight finds 2 places that cause it:
// message msg_… part prt_… (SF151), …".
func CausesNote(causes []Finding) string {
	if len(causes) == 0 {
		return "the error names no message, and sessfix finds nothing in the session that causes it"
	}
	return CausesHeader(causes) + " " + DescribeCauses(causes)
}

// CausesHeader is CausesNote without the places, for a list that follows.
// Causes that SF179, SF180 and SF181 found are not the preflight's: they
// are the PDFs (the files, the images) the stored failed request was the
// first to send.
func CausesHeader(causes []Finding) string {
	n := len(causes)
	only := func(code string) bool {
		return n > 0 && !slices.ContainsFunc(causes, func(f Finding) bool { return f.Code != code })
	}
	if only(SF180) {
		// One finding a part, whatever the number of its files.
		parts := "1 part, which cause it"
		if n > 1 {
			parts = fmt.Sprintf("%d parts, which cause it", n)
		}
		return "the error names no message; the failed request was the first to send the files of " + parts + ":"
	}
	if only(SF181) {
		images := "image that causes it"
		if n > 1 {
			images = "images that cause it"
		}
		return fmt.Sprintf("the error names no message; the failed request was the first to send %d %s:", n, images)
	}
	if only(SF179) {
		pdfs := "PDF that causes it"
		if n > 1 {
			pdfs = "PDFs that cause it"
		}
		return fmt.Sprintf("the error names no message; the failed request was the first to send %d %s:", n, pdfs)
	}
	places := "places that cause it"
	if n == 1 {
		places = "place that causes it"
	}
	if !slices.ContainsFunc(causes, func(f Finding) bool { return predictsError(f.Code) }) {
		// The rules an error is recognised as by its marks (OpenCode's
		// own errors): not the preflight's findings.
		problems := "problems that cause it"
		if n == 1 {
			problems = "problem that causes it"
		}
		return fmt.Sprintf("the error names no message; sessfix finds %d %s:", n, problems)
	}
	return fmt.Sprintf("the error names no message; the preflight finds %d %s:", n, places)
}

// fallbackCause is, by error type, the rule whose findings a stored or
// pasted error takes as its causes when no error-level finding predicts
// its text: SF172 and SF177 are warnings between their two limits (sessfix
// cannot tell the model's; the error tells it), and SF178's finding on a
// tool result's PDF has no provider_error (the path the API prints there
// is not known); SF179, SF180 and SF181 name what a failed request was the
// first to send, which no preflight predicts.
var fallbackCause = map[opencode.ErrorType]string{opencode.ErrorTooManyImages: SF172, opencode.ErrorPDFPages: SF177, opencode.ErrorInvalidPDF: SF178, opencode.ErrorPDFUnprocessable: SF179, opencode.ErrorRequestTooLarge: SF180, opencode.ErrorInvalidImage: SF181}

// MediaCauses returns the findings of fs that a stored media error (text,
// pointing at partID when known) is about and that a media repair fixes:
// the preflight's SF170 and SF171 findings on a user's pasted image or a
// tool result's image (shrinkImage), its SF172 finding of a request
// over the image count (markToolCompacted), and its findings of image data
// that is no image (SF173), PDFs over the page limit (SF177) and files
// that are no PDF (SF178) (replaceMedia).
func MediaCauses(fs []Finding, text, partID string) []Finding {
	causes := ErrorCauses(fs, text)
	if code := fallbackCause[opencode.DetectErrorType(text)]; len(causes) == 0 && code != "" {
		for _, f := range fs {
			if f.Code == code {
				causes = append(causes, f)
			}
		}
	}
	var out []Finding
	for _, f := range causes {
		if (f.Fix == "shrinkImage" || f.Fix == "markToolCompacted" || f.Fix == "replaceMedia") && (partID == "" || f.PartID == partID) {
			out = append(out, f)
		}
	}
	return out
}

// imageWithinLimits names how the stored images an image error points at
// show the repair ("" when they do not): a user's file part, or every
// image attachment of a tool part, whose base64 and sides are within the
// limits now, which the error said they were not.
func imageWithinLimits(r *opencode.Recovery, s *store.Session) string {
	if (r.Type != opencode.ErrorImageTooLarge && r.Type != opencode.ErrorImageDimensions) || r.PartID == "" {
		return ""
	}
	p := opencode.FindPart(s, r.TargetID, r.PartID)
	if p == nil {
		return ""
	}
	images := opencode.DataImages(p)
	if len(images) == 0 {
		return ""
	}
	// The limits of the session's family (Anthropic's when sessfix checks
	// no size for it), the side for the number of images the next request
	// holds, as the scan's check (checkImages) takes them.
	req := sent.Build(s, sent.Options{NextPrompt: true})
	lim := opencode.SizeLimitOf(req)
	side := lim.Side(len(opencode.RequestImages(s, req)))
	for _, data := range images {
		if lim.Over(data) {
			return ""
		}
		if w, h, ok, known := opencode.ImageHeader(data); !ok || !known || (side > 0 && (w > side || h > side)) {
			return ""
		}
	}
	if len(images) > 1 {
		return "those images are within the limits now (shrunk since)"
	}
	return "that image is within the limits now (shrunk since)"
}

// imageCountWithin names how a session shows a too-many-images error
// repaired ("" when it does not): its next request holds no more images
// (and documents, when the error counts them) than the limit the error
// printed, which OpenCode's prune of old tool
// results (markToolCompacted) brings about.
func imageCountWithin(r *opencode.Recovery, s *store.Session) string {
	if r.Type != opencode.ErrorTooManyImages || r.Failed == nil {
		return ""
	}
	limit, ok := opencode.ImageCountLimit(r.Text)
	if !ok {
		return ""
	}
	req := sent.Build(s, sent.Options{NextPrompt: true})
	n, withDocs := opencode.CountedMedia(s, req, r.Text)
	what := "images"
	if withDocs {
		what = "images and documents"
	}
	if n > limit {
		return ""
	}
	return fmt.Sprintf("the next request holds %d %s now, within the limit of %d", n, what, limit)
}

// pdfPagesWithin names how a session shows a PDF page-limit error
// repaired ("" when it does not): the PDFs its next request sends have no
// more pages together than the limit the error printed, which replacing
// PDFs by placeholders (replaceMedia) brings about.
func pdfPagesWithin(r *opencode.Recovery, s *store.Session) string {
	if r.Type != opencode.ErrorPDFPages || r.Failed == nil {
		return ""
	}
	limit, ok := opencode.PDFPageLimit(r.Text)
	if !ok {
		return ""
	}
	req := sent.Build(s, sent.Options{NextPrompt: true})
	_, pages := opencode.RequestPDFPages(opencode.RequestFiles(s, req))
	if pages > limit {
		return ""
	}
	return fmt.Sprintf("the PDFs the next request sends have %d pages now, within the limit of %d", pages, limit)
}

// contextWithin names how a session shows a context-window error repaired
// ("" when it does not): the window is known from the session alone (the
// provider's error, or the largest prompt it accepted) and sessfix's
// conservative estimate of the next request is within it now, which
// OpenCode's prune of old tool results (markToolCompacted) brings about.
// When the error prints no window, the window OpenCode's model data gives
// (oc) is taken too, but only where it explains the refusal: the request
// with every tool result counted whole is over it even by the lenient
// estimate (a model data window too big to explain the error proves
// nothing).
func contextWithin(r *opencode.Recovery, s *store.Session, oc *ocenv.Resolver) string {
	if r.Type != opencode.ErrorContextOverflow || r.Failed == nil {
		return ""
	}
	w, ok := opencode.WindowOf(s, nil)
	var m opencode.ContextWindow
	mok := false
	if oc != nil && !w.Provider {
		m, mok = opencode.WindowOf(s, oc)
		mok = mok && !m.LowerBound
	}
	if !ok && !mok {
		return ""
	}
	req := sent.Build(s, sent.Options{NextPrompt: true})
	if mok && opencode.EstimateUncompacted(s, req).Low > m.Context {
		w, ok = m, true
	}
	if !ok {
		return ""
	}
	est := opencode.EstimateContext(s, req, nil)
	if est.Tokens > w.Context {
		return ""
	}
	return fmt.Sprintf("the next request is about %d tokens now, within the model's %d-token context window", est.Tokens, w.Context)
}

// repairedSince names how the messages before a stored failed attempt
// show a repair made after it ("" when they do not, or for a pasted error:
// nothing tells when it happened): a message excluded from requests, or
// one changed since the attempt.
func repairedSince(r *opencode.Recovery, s *store.Session) string {
	if r.Failed == nil {
		return ""
	}
	for _, m := range s.Messages {
		if m.ID == r.Failed.ID {
			break
		}
		if sent.ExcludedBySessfix(m) {
			return "sessfix has excluded a message from requests since, and the session shows no such problem any more"
		}
		// OpenCode writes synthetic text on user messages itself (file
		// reads, agent calls): only an assistant message's synthetic
		// part is sessfix's mark here.
		if r.Changed(m, m.Role == "assistant") != "" {
			return "the session has been repaired since and shows no such problem any more"
		}
	}
	return ""
}

// mediaReplaced names how a session shows an invalid-image error repaired
// ("" when it does not): a tool result before the failed attempt carries
// sessfix's placeholder for media it removed (replaceMedia). A user's file
// part replaced so is a text part written after the attempt, which the
// check of changed messages sees.
func mediaReplaced(r *opencode.Recovery, s *store.Session) string {
	if (r.Type != opencode.ErrorInvalidImage && r.Type != opencode.ErrorRequestTooLarge && r.Type != opencode.ErrorInvalidPDF && r.Type != opencode.ErrorPDFUnprocessable) || r.Failed == nil {
		return ""
	}
	for _, m := range s.Messages {
		if m.ID == r.Failed.ID {
			break
		}
		for _, p := range m.Parts {
			if p.Type == "tool" && strings.Contains(p.Get("state.output").String(), opencode.MediaRemovedMark) {
				return "sessfix has replaced the media the provider rejected by a placeholder since, and the session shows no such problem any more"
			}
		}
	}
	return ""
}
