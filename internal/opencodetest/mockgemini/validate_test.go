package mockgemini

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
)

const model3 = "gemini-3-flash-preview"

func sigFor(model string) string { return Sign(DefaultSecret, model) }

func text(s string) string { j, _ := json.Marshal(s); return `{"text":` + string(j) + `}` }

func thought(s, sig string) string {
	j, _ := json.Marshal(s)
	if sig == "" {
		return `{"text":` + string(j) + `,"thought":true}`
	}
	return `{"text":` + string(j) + `,"thought":true,"thoughtSignature":"` + sig + `"}`
}

func call(name, sig string) string {
	s := `{"functionCall":{"id":"c1","name":"` + name + `","args":{"command":"ls"}}`
	if sig != "" {
		s += `,"thoughtSignature":"` + sig + `"`
	}
	return s + "}"
}

func fresp(name string) string {
	return `{"functionResponse":{"id":"c1","name":"` + name + `","response":{"name":"` + name + `","content":"ok"}}}`
}

func user(parts ...string) string {
	return `{"role":"user","parts":[` + strings.Join(parts, ",") + `]}`
}

func model(parts ...string) string {
	return `{"role":"model","parts":[` + strings.Join(parts, ",") + `]}`
}

func inline(mime, data string) string {
	return `{"inlineData":{"mimeType":"` + mime + `","data":"` + data + `"}}`
}

func req(contents ...string) string {
	return `{"contents":[` + strings.Join(contents, ",") + `],"tools":[{"functionDeclarations":[{"name":"bash"}]}]}`
}

func TestValidator(t *testing.T) {
	s3 := sigFor(model3)
	hi := user(text("hi"))
	cases := []struct {
		name  string
		model string
		body  string
		want  string // "" means accepted
	}{
		{"plain", model3, req(hi), ""},
		{"no contents", model3, `{"contents":[]}`, TextContentsNotSpecified},
		{"bad role", model3, req(hi, `{"role":"assistant","parts":[{"text":"x"}]}`), TextInvalidRole},
		{"empty parts", model3, req(hi, model(), hi), MsgEmptyParts(1)},
		{"empty parts first", model3, req(user()), MsgEmptyParts(0)},

		{"tool loop signed", model3, req(hi, model(thought("plan", ""), call("bash", s3)), user(fresp("bash"))), ""},
		{"tool loop unsigned", model3, req(hi, model(call("bash", "")), user(fresp("bash"))), MsgMissingSignature("bash", 2)},
		{"unsigned call in an earlier turn is fine", model3, req(hi, model(call("bash", "")), user(fresp("bash")), model(text("done")), hi), ""},
		{"second step of the current turn unsigned", model3,
			req(hi, model(call("bash", s3)), user(fresp("bash")), model(call("read", "")), user(fresp("read"))), MsgMissingSignature("read", 4)},
		{"parallel calls: only the first needs it", model3,
			req(hi, model(call("bash", s3), call("read", "")), user(fresp("bash"), fresp("read"))), ""},
		{"parallel calls: first unsigned", model3,
			req(hi, model(call("bash", ""), call("read", s3)), user(fresp("bash"), fresp("read"))), MsgMissingSignature("bash", 2)},
		{"skip placeholder", model3, req(hi, model(call("bash", SkipSignature)), user(fresp("bash"))), ""},
		{"context placeholder", model3, req(hi, model(call("bash", ContextSignature)), user(fresp("bash"))), ""},
		{"gemini 2.5 needs no signature", "gemini-2.5-flash", req(hi, model(call("bash", "")), user(fresp("bash"))), ""},

		{"signature of another model", model3, req(hi, model(call("bash", sigFor("gemini-2.5-pro"))), user(fresp("bash"))), TextCorruptedSignature},
		{"signature of another secret", model3, req(hi, model(call("bash", Sign([]byte("other"), model3))), user(fresp("bash"))), TextCorruptedSignature},
		{"garbage signature in an old turn", model3, req(hi, model(text("a"), `{"text":"","thoughtSignature":"Q29ycnVwdA=="}`), hi), TextCorruptedSignature},
		{"corrupted signature on a thought", model3, req(hi, model(thought("x", "bm9wZQ=="), text("a")), hi), TextCorruptedSignature},
		{"gemini 2.5 ignores signatures", "gemini-2.5-flash", req(hi, model(call("bash", "bm9wZQ==")), user(fresp("bash"))), ""},

		{"call turn first", model3, req(model(call("bash", s3)), user(fresp("bash"))), TextCallTurnOrder},
		{"call turn after model turn", model3, req(hi, model(text("a")), model(call("bash", s3)), user(fresp("bash"))), TextCallTurnOrder},
		{"response without call", model3, req(hi, model(text("a")), user(fresp("bash"))), TextResponseTurnOrder},
		{"response count", model3, req(hi, model(call("bash", s3), call("read", "")), user(fresp("bash"))), TextResponseCount},
		{"model turn after model turn is fine", model3, req(hi, model(text("a")), model(text("b")), hi), ""},

		{"a png", model3, req(user(text("look"), inline("image/png", mockstream.TinyImage("image/png")))), ""},
		{"a jpeg", model3, req(user(text("look"), inline("image/jpeg", mockstream.TinyImage("image/jpeg")))), ""},
		{"a png's first bytes", model3, req(user(text("look"), inline("image/png", "iVBORw0KGgoAAAANAAAAAAAAAAAA"))), TextInvalidImage},
		{"text sent as a png", model3, req(user(text("look"), inline("image/png", "dGhpcyBpcyBub3QgYSBwaWN0dXJlCg=="))), TextInvalidImage},
		{"not base64", "gemini-2.5-flash", req(user(text("look"), inline("image/webp", "no base64 here"))), TextInvalidImage},
		{"a pdf is no image", model3, req(user(text("look"), inline("application/pdf", "JVBERi0xLjQK"))), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseRequest(c.model, []byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if e := (Validator{}).Validate(r); e != nil {
				got = e.Message
				if e.Code != 400 || e.Status != "INVALID_ARGUMENT" {
					t.Errorf("code/status = %d %s", e.Code, e.Status)
				}
			}
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestSignatures(t *testing.T) {
	s := Sign(DefaultSecret, model3)
	if s == Sign(DefaultSecret, model3) {
		t.Error("two signatures are equal: the nonce is missing")
	}
	if !ValidSignature(DefaultSecret, model3, s) {
		t.Error("own signature rejected")
	}
	for _, bad := range []string{"", "x", s[:len(s)-4] + "AAAA", Sign(DefaultSecret, "gemini-3-pro-preview")} {
		if ValidSignature(DefaultSecret, model3, bad) {
			t.Errorf("%q accepted", bad)
		}
	}
	if !ValidSignature(nil, "any", SkipSignature) {
		t.Error("placeholder rejected")
	}
	for m, want := range map[string]bool{"gemini-3-flash-preview": true, "models/gemini-3.1-pro-preview": true,
		"gemini-2.5-pro": false, "gemini-flash-latest": false} {
		if IsGemini3(m) != want {
			t.Errorf("IsGemini3(%q) = %v", m, !want)
		}
	}
}

func TestExactTexts(t *testing.T) {
	// The strings users report from the real API; see provider-rules.md.
	for got, want := range map[string]string{
		MsgMissingSignature("shell", 2): "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:shell` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
		MsgEmptyParts(41):               "* GenerateContentRequest.contents[41].parts: contents.parts must not be empty.\n",
		string((&APIError{Code: 400, Status: "INVALID_ARGUMENT", Message: TextCorruptedSignature}).Body()): `{"error":{"code":400,"message":"Corrupted thought signature.","status":"INVALID_ARGUMENT"}}`,
	} {
		if got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	}
}
