package scan

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/ocenv/ocenvtest"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestEveryDocumentedErrorIsRecognised: the error each session rule
// documents is recognised, by a provider error class or else by the rule's
// marks, as that rule's (SF206 and SF207 share OpenCode's "Missing key
// at": the session's findings tell); marks are lower case and never shadow a
// class. The store-health rules (SF5xx) are the database's, which diagnose
// and fix --error, being about one session, do not take.
func TestEveryDocumentedErrorIsRecognised(t *testing.T) {
	for _, r := range registry {
		for _, m := range r.Marks {
			if m != strings.ToLower(m) || m == "" {
				t.Errorf("%s: mark %q is not lower case", r.Code, m)
			}
		}
		if r.ProviderError == "" || r.StoreCheck != nil {
			continue
		}
		typ := opencode.DetectErrorType(r.ProviderError)
		marked := MarkedRules(r.ProviderError)
		switch {
		case typ != opencode.ErrorNone && len(r.Marks) > 0:
			t.Errorf("%s: its error is of class %s, yet the rule has marks %q", r.Code, typ, r.Marks)
		case typ == opencode.ErrorNone && !slices.Contains(marked, r.Code):
			t.Errorf("%s: its documented error %q is of no class and not recognised by its marks (%v)", r.Code, r.ProviderError, marked)
		}
	}
	if got := MarkedRules("messages.3.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. Missing key at"); got != nil {
		t.Errorf("an error of a class is recognised by marks too: %v", got)
	}
	if got := MarkedRules("Error: PROVIDERMODELNOTFOUNDERROR model not found: x/y"); !slices.Equal(got, []string{SF213}) {
		t.Errorf("OpenCode's model error is recognised as %v, want SF213", got)
	}
}

// TestDiagnoseOpenCodesOwnError: OpenCode's error for a session whose model
// it no longer has (it logs ProviderModelNotFoundError and calls no
// provider) is SF213's; diagnose maps it to the session's SF213 finding,
// and says none is there when OpenCode's config is not read.
func TestDiagnoseOpenCodesOwnError(t *testing.T) {
	const id = "ses_e012acd97ffeUavLGQWWTi4jHW"
	const text = "ProviderModelNotFoundError: Model not found: anthropic/claude-retired-1. Did you mean: anthropic/claude-sonnet-4-5?"
	path := realstore.Copy(t, ocrelease.V1_18).Path
	storetest.ExecSQL(t, path,
		`UPDATE session SET model = '{"id":"claude-retired-1","providerID":"anthropic","variant":"default"}' WHERE id = '`+id+`'`)
	_, env := ocenvtest.Home(t, map[string]string{".cache/opencode/models.json": `{"anthropic": {"models": {"claude-sonnet-4-5": {}}}}`})
	s := storetest.Load(t, storetest.OpenOne(t, path), id)
	d := Diagnose(s, text, &Options{OpenCode: ocenv.NewResolver(env)})
	if d.ErrorType != opencode.ErrorNone || !slices.Equal(d.Rules, []string{SF213}) || len(d.Causes) != 1 || d.Causes[0].Code != SF213 {
		t.Fatalf("diagnosis: type %q, rules %v, causes %+v; want no class, SF213 and the session's SF213 finding", d.ErrorType, d.Rules, d.Causes)
	}
	if got, want := d.Describe(), "the error names no message; sessfix finds 1 problem that causes it: the session (SF213)"; got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
	s = storetest.Load(t, storetest.OpenOne(t, path), id)
	d = Diagnose(s, text, &Options{})
	if !slices.Equal(d.Rules, []string{SF213}) || len(d.Causes) != 0 || !strings.Contains(d.Describe(), "finds none of it in the session") {
		t.Errorf("without OpenCode's config: rules %v, causes %+v, %q", d.Rules, d.Causes, d.Describe())
	}
}

// TestOpenCodesLoadErrorsAreRecognised: every 400 real OpenCode 1.18.33
// answered GET /session/:id/message with, one change to one key of one
// record at a time (internal/opencodetest's schema probe, its golden file),
// that names where (` at [N]["info"]…`, ` at [N]["parts"]…`) is recognised
// as the schema rules' (SF205–SF208) and as no provider error class.
func TestOpenCodesLoadErrorsAreRecognised(t *testing.T) {
	b, err := os.ReadFile("../../internal/opencodetest/testdata/schema-" + ocrelease.V1_18 + ".golden")
	if err != nil {
		t.Fatal(err)
	}
	schema := []string{SF205, SF206, SF207, SF208}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, " | ")
		if strings.HasPrefix(line, "#") || len(f) != 4 || !strings.HasPrefix(f[3], "400 ") || !strings.Contains(f[3], " at [") {
			continue
		}
		n++
		text := strings.TrimPrefix(f[3], "400 ")
		if typ := opencode.DetectErrorType(text); typ != opencode.ErrorNone {
			t.Errorf("OpenCode's %q is classified as the provider error %s", text, typ)
			continue
		}
		if got := MarkedRules(text); !slices.Equal(got, schema) {
			t.Errorf("OpenCode's %q is recognised as %v, want %v", text, got, schema)
		}
	}
	if n < 300 {
		t.Fatalf("only %d of OpenCode's 400 answers with a place in the golden file", n)
	}
}
