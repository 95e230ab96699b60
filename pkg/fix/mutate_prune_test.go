package fix

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// manyToolImages is a session whose read tool returned n small images.
func manyToolImages(t *testing.T, n int) *storetest.Fixture {
	t.Helper()
	small := storetest.NoisyPNG(t, 3, 8, 8)
	var ims []storetest.Image
	for range n {
		ims = append(ims, storetest.Image{Mime: "image/png", Base64: small})
	}
	return storetest.ToolImageSession(ims...)
}

// A request of 601 images (over every Anthropic model's limit): SF172
// names OpenCode's prune, and the repair marks the tool result compacted,
// which leaves none of its images in the next request; nothing else of the
// part changes.
func TestPruneToolImagesOverTheCount(t *testing.T) {
	s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), manyToolImages(t, 601))))[0]
	f := fs0(scan.CheckSession(s, scanOpts()), "SF172")
	if f.Severity != scan.Error || f.Fix != "markToolCompacted" {
		t.Fatalf("SF172 should be an error repaired by markToolCompacted: %+v", f)
	}
	before := toolPart(t, s)
	fixed := fixAndRecheck(t, s, "prune")
	after := toolPart(t, fixed)
	if after.Get("state.time.compacted").Int() != testNow.UnixMilli() {
		t.Errorf("state.time.compacted = %s, want the fix's time", after.Get("state.time.compacted").Raw)
	}
	for _, path := range []string{"state.attachments", "state.output", "state.input", "state.time.start", "state.time.end", "callID"} {
		if after.Get(path).Raw != before.Get(path).Raw {
			t.Errorf("%s changed", path)
		}
	}
	if n := len(opencode.RequestImages(fixed, sent.Build(fixed, sent.Options{NextPrompt: true}))); n != 0 {
		t.Errorf("the next request still sends %d images", n)
	}
}

// pruneStoredCount stores text as the refusal of fx's last attempt (the
// answer's second message, whose parts go) and wants the stored error to
// plan OpenCode's prune of the tool result, then read as repaired: within
// the limit the text printed.
func pruneStoredCount(t *testing.T, fx *storetest.Fixture, text string, limit int) {
	t.Helper()
	last := &fx.Messages[2]
	last.Body = []byte(strings.Replace(string(last.Body), `"finish":"stop"}`,
		`"error":{"name":"APIError","data":{"message":`+jsonString(text)+`,"statusCode":400,"isRetryable":false}}}`, 1))
	last.Parts = nil
	s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), fx)))[0]
	f := fs0(scan.CheckSession(s, scanOpts()), "SF302")
	if f.Severity != scan.Error || f.Fix != "markToolCompacted" || f.ErrorType != string(opencode.ErrorTooManyImages) {
		t.Fatalf("%q: SF302 should name markToolCompacted as the stored error's repair: %+v", text, f)
	}
	p, err := Plan(s, []scan.Finding{f}, planOpts())
	if err != nil || len(p.Changes.Edits) != 1 || p.Changes.Edits[0].Mutation != "markToolCompacted" || p.Changes.Edits[0].ID != storetest.ToolImagePartID {
		t.Fatalf("%q: plan from the stored error: %v %+v", text, err, p)
	}
	fixed, err := ApplyInMemory(s, p.Changes)
	if err != nil {
		t.Fatal(err)
	}
	if g := fs0(scan.CheckSession(fixed, scanOpts()), "SF302"); g.Severity != scan.Info || !strings.Contains(g.Message, fmt.Sprintf("within the limit of %d", limit)) {
		t.Errorf("%q: SF302 after the prune: %s %q", text, g.Severity, g.Message)
	}
}

// The stored error of the rejected request (101 images against a limit of
// 100) plans the same prune from the error alone, and reads as repaired
// afterwards: in the Messages API's words as users quote them (images +
// documents > limit, and its older "Too much media" wording) and in
// OpenCode Console's.
func TestStoredTooManyImagesErrorPrunes(t *testing.T) {
	for _, text := range []string{
		"too many images and documents: 101 + 0 > 100",
		"Too much media: 0 document pages + 101 images > 100",
		"request contains 101 images, exceeding the maximum of 100 allowed per request",
	} {
		pruneStoredCount(t, manyToolImages(t, 101), text, 100)
	}
}

// A model on OpenCode Zen that sessfix has no family for (muse-spark,
// sent through Zen Go's /responses) gets Console's 50 images: the
// preflight predicts the refusal of 51, and the error users met
// (anomalyco/opencode#47487), stored after the failed attempt, plans
// OpenCode's prune and reads as repaired afterwards.
func TestStoredZenImageCountErrorPrunes(t *testing.T) {
	const text = "Error from provider (Console Go): Upstream request failed: [invalid_request_error] request contains 51 images, exceeding the maximum of 50 allowed per request"
	zen := strings.NewReplacer(`"providerID":"anthropic"`, `"providerID":"opencode"`, `"modelID":"claude-sonnet-4-5"`, `"modelID":"muse-spark-1.3-contributor"`)
	fx := manyToolImages(t, 51)
	for i := range fx.Messages {
		fx.Messages[i].Body = []byte(zen.Replace(string(fx.Messages[i].Body)))
	}
	s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), fx)))[0]
	if k := sent.FamilyOf("opencode", "muse-spark-1.3-contributor"); k != sent.Other {
		t.Fatalf("muse-spark is family %s; the case is about a model sessfix has no family for", k)
	}
	if f := fs0(scan.CheckSession(s, scanOpts()), "SF172"); f.Severity != scan.Error || f.Fix != "markToolCompacted" ||
		f.ProviderError != "request contains 51 images, exceeding the maximum of 50 allowed per request" {
		t.Fatalf("SF172 should predict Console's refusal of 51 images: %+v", f)
	}

	pruneStoredCount(t, fx, text, 50)
}

// Claude on Bedrock refused 21 images and documents in 2025
// ("too many images and documents: 21 + 0 > 20", cline/cline#1844;
// boto/boto3#4632), a limit Bedrock has since lifted (29 images accepted in
// 2026-09, aws-solutions-library-samples/accelerated-intelligent-document-processing-on-aws#994):
// sessfix predicts Anthropic's limits for it (no SF172 at 21), and where a
// region or model still refuses, the stored refusal, after Bedrock's
// prefix, plans OpenCode's prune down to the 20 it printed and reads as
// repaired afterwards.
func TestStoredBedrockImageCountErrorPrunes(t *testing.T) {
	fx := onModel(manyToolImages(t, 21), "amazon-bedrock", "anthropic.claude-sonnet-4-5-20250929-v1:0")
	s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), fx)))[0]
	if k := sent.FamilyOf("amazon-bedrock", "anthropic.claude-sonnet-4-5-20250929-v1:0"); k != sent.Bedrock {
		t.Fatalf("the model is family %s, want Bedrock", k)
	}
	if f := fs0(scan.CheckSession(s, scanOpts()), "SF172"); f.Code != "" {
		t.Fatalf("SF172 at 21 images on Bedrock: %+v", f)
	}
	pruneStoredCount(t, fx, "The model returned the following errors: too many images and documents: 21 + 0 > 20", 20)
}

// A local model served by vLLM through an OpenAI-compatible provider, and
// the other servers' wordings users quote: sessfix knows no limit for the
// model (no SF172), so the stored error alone says it. Each text's limit is
// read, the stored error plans OpenCode's prune, and the session reads as
// repaired afterwards.
func TestStoredImageCountErrorOfOtherServersPrunes(t *testing.T) {
	vllm := strings.NewReplacer(`"providerID":"anthropic"`, `"providerID":"vllm"`, `"modelID":"claude-sonnet-4-5"`, `"modelID":"Qwen/Qwen2.5-VL-7B-Instruct"`)
	for text, limit := range map[string]int{
		"At most 5 image(s) may be provided in one request.":                                           5,
		"Too many images in request: 7 images provided, but the model supports a maximum of 6 images.": 6,
		"Too many images in request. Max is 4.":                                                        4,
		"Bad Request: too many images in the message, max allowed is 3":                                3,
		"Image count 7 exceeds limit 4 per request.":                                                   4,
		"Please use fewer than 6 images in your request to models/gemini-2.5-flash":                    5,
	} {
		fx := manyToolImages(t, 7)
		for i := range fx.Messages {
			fx.Messages[i].Body = []byte(vllm.Replace(string(fx.Messages[i].Body)))
		}
		s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), fx)))[0]
		if f := fs0(scan.CheckSession(s, scanOpts()), "SF172"); f.Code != "" {
			t.Fatalf("SF172 knows a limit for the model: %+v", f)
		}
		pruneStoredCount(t, fx, text, limit)
	}
}

// Images a user attached are not pruned: a request over the count with
// no tool result to prune keeps its finding, and nothing is planned.
func TestPruneLeavesUserImages(t *testing.T) {
	small := storetest.NoisyPNG(t, 3, 8, 8)
	var ims []storetest.Image
	for range 601 {
		ims = append(ims, storetest.Image{Mime: "image/png", Filename: "a.png", Base64: small})
	}
	s := imageSession(t, store.ShapeStorage, ims...)
	f := fs0(scan.CheckSession(s, scanOpts()), "SF172")
	if f.Code == "" {
		t.Fatal("no SF172 for 601 pasted images")
	}
	p, err := Plan(s, []scan.Finding{f}, planOpts())
	if err != nil || !p.Empty() || len(p.Unfixed) != 1 {
		t.Fatalf("plan: %v, empty %v, unfixed %+v", err, p.Empty(), p.Unfixed)
	}
}

// Where the limit counts documents with the images, a tool result that
// sends only PDFs is pruned too: 99 images a user attached and a read of
// two PDFs are 101 media, and pruning the PDFs' tool result brings the
// request to 99 without touching the user's images.
func TestPruneToolDocumentsOverTheCount(t *testing.T) {
	small := storetest.NoisyPNG(t, 3, 8, 8)
	pdf := pdfOf("manual.pdf", 2, false)
	fx := storetest.ToolImageSession(pdf, pdf)
	u := &fx.Messages[0]
	for i := range 99 {
		u.Parts = append(u.Parts, storetest.Part{Body: json.RawMessage(fmt.Sprintf(`{"id":"prt_0000000000010000000000%04d","type":"file","mime":"image/png","filename":"a.png","url":"data:image/png;base64,%s"}`, i+1, small))})
	}
	last := &fx.Messages[2]
	last.Body = []byte(strings.Replace(string(last.Body), `"finish":"stop"}`,
		`"error":{"name":"APIError","data":{"message":"too many images and documents: 99 + 2 > 100","isRetryable":false}}}`, 1))
	last.Parts = nil
	s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), fx)))[0]
	f := fs0(scan.CheckSession(s, scanOpts()), "SF302")
	if f.Fix != "markToolCompacted" {
		t.Fatalf("SF302 should name markToolCompacted: %+v", f)
	}
	p, err := Plan(s, []scan.Finding{f}, planOpts())
	if err != nil || len(p.Changes.Edits) != 1 || p.Changes.Edits[0].ID != storetest.ToolImagePartID || len(p.Unfixed) != 0 {
		t.Fatalf("plan from the stored error: %v edits %+v unfixed %+v", err, p.Changes.Edits, p.Unfixed)
	}
	fixed, err := ApplyInMemory(s, p.Changes)
	if err != nil {
		t.Fatal(err)
	}
	if g := fs0(scan.CheckSession(fixed, scanOpts()), "SF302"); g.Severity != scan.Info || !strings.Contains(g.Message, "99 images and documents now, within the limit of 100") {
		t.Errorf("SF302 after the prune: %s %q", g.Severity, g.Message)
	}
}
