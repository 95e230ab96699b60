package sent

import "testing"

// OpenCode 1.18.33's rewrite of tool call ids for the models it knows as
// Mistral's (read from the binary, seen on devstral: OBSERVED.md).
func TestMistralCallID(t *testing.T) {
	for in, want := range map[string]string{
		"toolu_015A28zpZRXSYnqFEFmRyDA4Ws": "toolu015A",
		"call_PTLP8xhu3uwZk4l3nlnrrJha":    "callPTLP8",
		"call_1":                           "call10000",
		"aB3xK9mP2":                        "aB3xK9mP2",
		"__":                               "000000000",
	} {
		if got := MistralCallID(in); got != want || !ValidMistralCallID(got) {
			t.Errorf("MistralCallID(%q) = %q, want %q", in, got, want)
		}
	}
	for _, id := range []string{"call_1", "toolu_01A", "aB3xK9mP", "aB3xK9mP2x", ""} {
		if ValidMistralCallID(id) {
			t.Errorf("%q is not of mistral's form", id)
		}
	}
	for _, c := range []struct {
		provider, model    string
		mistral, rewritten bool
	}{
		{"mistral", "magistral-medium-latest", true, true},
		{"mistralcompat", "devstral-medium-latest", true, true},
		{"openrouter", "mistralai/magistral-medium", true, true},
		{"mistralcompat", "magistral-medium-latest", true, false},
		{"lechat", "ministral-8b-latest", true, false},
		{"kimi", "kimi-k2-thinking", false, false},
	} {
		if IsMistral(c.provider, c.model) != c.mistral || NormalizesCallIDs(c.provider, c.model) != c.rewritten {
			t.Errorf("%s/%s: mistral %v, rewritten %v", c.provider, c.model, IsMistral(c.provider, c.model), NormalizesCallIDs(c.provider, c.model))
		}
		if c.mistral && FamilyOf(c.provider, c.model) != Chat {
			t.Errorf("%s/%s is not Chat Completions", c.provider, c.model)
		}
	}
}
