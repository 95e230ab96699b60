package scan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// readPart is a completed read tool part whose output is n bytes.
func readPart(i, n int) string {
	return fmt.Sprintf(`{"type":"tool","callID":"toolu_%d","tool":"read","state":{"status":"completed","input":{"filePath":"/p/f%d.txt"},"output":%q,"time":{"start":1,"end":2}}}`,
		i, i, strings.Repeat("x", n))
}

// overflowSession is the session OpenCode 1.18.33 stores with
// `compaction.auto: false` when a turn's tool results put the request over
// the window: one read, then three at once, then the request refused and
// stored as a ContextOverflowError on an empty assistant message.
func overflowSession(firstUser string) *store.Session {
	body := func(input int, finish string) string {
		return fmt.Sprintf(`{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":2,"completed":3},"finish":%q,"tokens":{"input":%d,"output":20,"reasoning":0,"cache":{"read":0,"write":0}}}`, finish, input)
	}
	failed := `{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":4,"completed":5},"finish":"error",` +
		`"error":{"name":"ContextOverflowError","data":{"message":"prompt is too long: 50961 tokens > 40000 maximum"}},"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}}}`
	return session(store.ShapeSQLite,
		user("u1", firstUser),
		testMessage("a1", "assistant", body(7634, "tool-calls"), `{"type":"step-start"}`, `{"type":"text","text":"I will read."}`, readPart(1, 43000)),
		testMessage("a2", "assistant", body(18487, "tool-calls"), `{"type":"step-start"}`, `{"type":"text","text":"And the others."}`,
			readPart(2, 43000), readPart(3, 44000), readPart(4, 43000)),
		testMessage("a3", "assistant", failed),
	)
}

func findingsOf(fs []Finding, code string) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Code == code {
			out = append(out, f)
		}
	}
	return out
}

// A history over the window the provider's stored error prints is SF174,
// an error with OpenCode's prune as its repair, and SF302's stored overflow
// is repaired through it. The prune chosen is the oldest turn's outputs
// first, the largest of a turn first, and brings the estimate under 90% of
// the usable context; once those parts are compacted the stored error is
// history.
func TestContextWindowExceeded(t *testing.T) {
	s := overflowSession("read the notes")
	fs := CheckSession(s, settled())
	got := findingsOf(fs, SF174)
	if len(got) != 1 || got[0].Severity != Error || got[0].Fix != "markToolCompacted" || got[0].ErrorType != string(opencode.ErrorContextOverflow) ||
		!strings.Contains(got[0].Message, "40000-token context window (from the provider's error)") || !strings.Contains(got[0].ProviderError, "> 40000 maximum") {
		t.Fatalf("SF174: %+v", got)
	}
	sf302 := findingsOf(fs, SF302)
	if len(sf302) != 1 || sf302[0].Fix != "markToolCompacted" {
		t.Fatalf("SF302: %+v", sf302)
	}

	w, ok := opencode.WindowOf(s, nil)
	if !ok || w.Context != 40000 || !w.Provider {
		t.Fatalf("window %+v %v", w, ok)
	}
	r := sent.Build(s, sent.Options{NextPrompt: true})
	parts, fits := opencode.PruneForWindow(s, r, w)
	var ids []string
	for _, p := range parts {
		ids = append(ids, p.Get("callID").String())
	}
	// Usable context: 40000 - min(32000, 40000/4) = 30000, target 27000.
	if !fits || strings.Join(ids, " ") != "toolu_3 toolu_1 toolu_2" {
		t.Fatalf("prune %v fits %v", ids, fits)
	}
	chosen := map[string]bool{}
	for _, p := range parts {
		chosen[p.ID] = true
	}
	if est := opencode.EstimateContext(s, r, chosen); est.Tokens > w.Target() {
		t.Fatalf("estimate after the prune %+v over %d", est, w.Target())
	}
	for _, p := range parts {
		p.Raw = []byte(strings.Replace(string(p.Raw), `"time":{"start":1,"end":2}`, `"time":{"start":1,"end":2,"compacted":9}`, 1))
	}
	fs = CheckSession(s, settled())
	if got := findingsOf(fs, SF174); len(got) != 0 {
		t.Fatalf("SF174 after the prune: %+v", got)
	}
	failed := s.Messages[3]
	r2 := opencode.ReadError(s, failed.Get("error.data.message").String(), failed)
	if why, ok := Resolved(r2, s, findingsOf(fs, SF174), nil); !ok || !strings.Contains(why, "within the model's 40000-token context window") {
		t.Fatalf("the stored overflow after the prune: %q %v", why, ok)
	}
}

// When what is over the window is the user's own text (a prompt pasting
// 200 kB, refused), compacting every tool result is not enough: SF174 is
// reported without a repair.
func TestContextWindowUserTextNotPruned(t *testing.T) {
	s := overflowSession("read the notes")
	s.Messages = append(s.Messages, user("u2", strings.Repeat("pasted log line\n", 12500)), testMessage("a4", "assistant", string(s.Messages[3].Raw)))
	got := findingsOf(CheckSession(s, settled()), SF174)
	if len(got) != 1 || got[0].Fix != "" || !strings.Contains(got[0].Message, "not enough") {
		t.Fatalf("SF174: %+v", got)
	}
}

// Without a window (no stored error that prints it, no model data) the
// rule checks nothing.
func TestContextWindowUnknown(t *testing.T) {
	s := overflowSession("read the notes")
	s.Messages = s.Messages[:3]
	if got := findingsOf(CheckSession(s, settled()), SF174); len(got) != 0 {
		t.Fatalf("SF174 without a window: %+v", got)
	}
}

// The window comes from OpenCode's model data (here the config), but the
// provider took a longer prompt than that in the session: the window is at
// least that prompt, and a request over it is only a warning. A request
// within the config's window is not reported.
func TestContextWindowFromModelData(t *testing.T) {
	cfg := func(context int) *Options {
		content := fmt.Sprintf(`{"provider":{"anthropic":{"models":{"claude-sonnet-4-5":{"limit":{"context":%d,"output":4000}}}}}}`, context)
		o := settled()
		o.OpenCode = ocenv.NewResolver(ocenv.Env{Getenv: func(k string) string {
			if k == "OPENCODE_CONFIG_CONTENT" {
				return content
			}
			return ""
		}})
		return o
	}
	s := overflowSession("read the notes")
	s.Messages = s.Messages[:3] // before the refused request: no stored error
	s.Info = &store.Record{Raw: []byte(`{"directory":"/work/x"}`)}
	got := findingsOf(CheckSession(s, cfg(40000)), SF174)
	if len(got) != 1 || got[0].Severity != Error || !strings.Contains(got[0].Message, "(from your opencode config)") {
		t.Fatalf("config window 40000: %+v", got)
	}
	got = findingsOf(CheckSession(s, cfg(10000)), SF174)
	if len(got) != 1 || got[0].Severity != Warning || !strings.Contains(got[0].Message, "18487 tokens), more than your opencode config gives") {
		t.Fatalf("config window under an accepted prompt: %+v", got)
	}
	if got := findingsOf(CheckSession(s, cfg(200000)), SF174); len(got) != 0 {
		t.Fatalf("config window 200000: %+v", got)
	}
}

// The other families' stored errors: the window is read from the text
// where it prints one (OpenAI Chat Completions, Gemini), and the finding
// says the family's own error. The Responses API's text prints none: the
// window is then the largest prompt the provider accepted, a warning.
func TestContextWindowOtherFamilies(t *testing.T) {
	for _, c := range []struct {
		name, provider, model, stored string
		window                        int
		severity                      Severity
		predicted                     string
	}{
		{"chat", "deepseek", "deepseek-chat",
			"This model's maximum context length is 40000 tokens. However, your messages resulted in 50961 tokens. Please reduce the length of the messages.",
			40000, Error, "This model's maximum context length is 40000 tokens. However, your messages resulted in "},
		{"responses", "openai", "gpt-5",
			`{"type":"error","sequence_number":2,"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model. Please adjust your input and try again.","param":"input"}}`,
			18487, Warning, "Your input exceeds the context window of this model. Please adjust your input and try again."},
		{"gemini", "google", "gemini-3-flash-preview",
			"The input token count (50961) exceeds the maximum number of tokens allowed (40000).",
			40000, Error, "exceeds the maximum number of tokens allowed (40000)."},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := overflowSession("read the notes")
			for _, m := range s.Messages {
				raw := strings.ReplaceAll(string(m.Raw), `"providerID":"anthropic","modelID":"claude-sonnet-4-5"`,
					fmt.Sprintf(`"providerID":%q,"modelID":%q`, c.provider, c.model))
				raw = strings.Replace(raw, `"message":"prompt is too long: 50961 tokens > 40000 maximum"`, fmt.Sprintf(`"message":%q`, c.stored), 1)
				m.Raw = []byte(raw)
			}
			w, ok := opencode.WindowOf(s, nil)
			if !ok || w.Context != c.window {
				t.Fatalf("window %+v %v, want %d", w, ok, c.window)
			}
			got := findingsOf(CheckSession(s, settled()), SF174)
			if len(got) != 1 || got[0].Severity != c.severity || got[0].Fix != "markToolCompacted" || !strings.Contains(got[0].ProviderError, c.predicted) {
				t.Fatalf("SF174: %+v", got)
			}
			// A warning is not taken for the stored error's cause.
			if sf302 := findingsOf(CheckSession(s, settled()), SF302); c.severity == Error && (len(sf302) != 1 || sf302[0].Fix != "markToolCompacted") {
				t.Fatalf("SF302: %+v", sf302)
			}
		})
	}
}

// Anthropic's other context-window error (the input and max_tokens over
// the window), which OpenCode does not take for an overflow and stores as
// an APIError: the stored error is a context overflow whose window it
// prints, and the prune repairs it.
func TestContextWindowInputAndMaxTokens(t *testing.T) {
	const stored = "input length and `max_tokens` exceed context limit: 50961 + 8192 > 40000, decrease input length or `max_tokens` and try again"
	if got := opencode.DetectErrorType(stored); got != opencode.ErrorContextOverflow {
		t.Fatalf("class %q", got)
	}
	s := overflowSession("read the notes")
	for _, m := range s.Messages {
		raw := strings.Replace(string(m.Raw), `"name":"ContextOverflowError","data":{"message":"prompt is too long: 50961 tokens > 40000 maximum"}`,
			fmt.Sprintf(`"name":"APIError","data":{"message":%q,"statusCode":400,"isRetryable":false}`, stored), 1)
		m.Raw = []byte(raw)
	}
	if w, ok := opencode.WindowOf(s, nil); !ok || w.Context != 40000 {
		t.Fatalf("window %+v %v, want 40000", w, ok)
	}
	sf302 := findingsOf(CheckSession(s, settled()), SF302)
	if len(sf302) != 1 || sf302[0].ErrorType != string(opencode.ErrorContextOverflow) || sf302[0].Fix != "markToolCompacted" {
		t.Fatalf("SF302: %+v", sf302)
	}
}

// The Responses API's stored overflow prints no window: with the model's
// window in OpenCode's model data, SF174 is an error that SF302 is repaired
// through, and once the old results are compacted the stored error counts
// as repaired (the fixture's schema findings aside: TestContextWindowOpenAI
// proves SF302 gone on a real store) (the config's window explains the refusal: the history with
// every result whole is over it). A config window too big to explain the
// refusal proves nothing: the stored error is not taken as repaired.
func TestContextWindowResponsesFromModelData(t *testing.T) {
	cfg := func(context int) *Options {
		content := fmt.Sprintf(`{"provider":{"openai":{"models":{"gpt-5":{"limit":{"context":%d,"output":4000}}}}}}`, context)
		o := settled()
		o.OpenCode = ocenv.NewResolver(ocenv.Env{Getenv: func(k string) string {
			if k == "OPENCODE_CONFIG_CONTENT" {
				return content
			}
			return ""
		}})
		return o
	}
	s := overflowSession("read the notes")
	for _, m := range s.Messages {
		raw := strings.ReplaceAll(string(m.Raw), `"providerID":"anthropic","modelID":"claude-sonnet-4-5"`, `"providerID":"openai","modelID":"gpt-5"`)
		raw = strings.Replace(raw, `"message":"prompt is too long: 50961 tokens > 40000 maximum"`, `"message":"Your input exceeds the context window of this model. Please adjust your input and try again."`, 1)
		m.Raw = []byte(raw)
	}
	s.Info = &store.Record{Raw: []byte(`{"directory":"/work/x"}`)}
	fs := CheckSession(s, cfg(40000))
	if got := findingsOf(fs, SF174); len(got) != 1 || got[0].Severity != Error || got[0].Fix != "markToolCompacted" {
		t.Fatalf("SF174: %+v", got)
	}
	if got := findingsOf(fs, SF302); len(got) != 1 || got[0].Fix != "markToolCompacted" {
		t.Fatalf("SF302: %+v", got)
	}
	w, _ := opencode.WindowOf(s, cfg(40000).OpenCode)
	parts, fits := opencode.PruneForWindow(s, sent.Build(s, sent.Options{NextPrompt: true}), w)
	if !fits {
		t.Fatalf("prune %d parts, does not fit", len(parts))
	}
	for _, p := range parts {
		p.Raw = []byte(strings.Replace(string(p.Raw), `"time":{"start":1,"end":2}`, `"time":{"start":1,"end":2,"compacted":9}`, 1))
	}
	failed := s.Messages[3]
	r := opencode.ReadError(s, failed.Get("error.data.message").String(), failed)
	fs = CheckSession(s, cfg(40000))
	if why, ok := Resolved(r, s, findingsOf(fs, SF174), cfg(40000).OpenCode); !ok || !strings.Contains(why, "within the model's 40000-token context window") {
		t.Fatalf("after the prune: %q %v", why, ok)
	}
	if _, ok := Resolved(r, s, nil, cfg(200000).OpenCode); ok {
		t.Fatal("a config window the refused request was within is taken as the window")
	}
	if _, ok := Resolved(r, s, nil, nil); ok {
		t.Fatal("without model data the stored error is taken as repaired")
	}
}

// The prune adds each part's gain to the estimate's sums instead of
// estimating again: it chooses exactly what estimating the request again
// after each part would (every shorter prefix of its choice is over the
// target by EstimateContext, the whole choice within it).
func TestPruneGainsExact(t *testing.T) {
	for name, s := range map[string]*store.Session{"small": overflowSession("read the notes"), "turns=30": bigOverflowSession(30, 4)} {
		r := sent.Build(s, sent.Options{NextPrompt: true})
		w, ok := opencode.WindowOf(s, nil)
		if !ok {
			t.Fatalf("%s: no window", name)
		}
		parts, fits := opencode.PruneForWindow(s, r, w)
		if !fits || len(parts) < 2 {
			t.Fatalf("%s: %d parts, fits %v", name, len(parts), fits)
		}
		chosen := map[string]bool{}
		for i, p := range parts {
			chosen[p.ID] = true
			est := opencode.EstimateContext(s, r, chosen).Tokens
			if last := i == len(parts)-1; last != (est <= w.Target()) {
				t.Fatalf("%s: after %d of %d parts the estimate is %d, target %d", name, i+1, len(parts), est, w.Target())
			}
		}
	}
}
