package mockanthropic

import (
	"strings"
	"testing"
)

func TestBuildNamesBlocksTheWayTheAPIDoes(t *testing.T) {
	secret := []byte("s")
	given := "given"
	converse := Blocks{Thinking: "reasoning", Redacted: "redacted", ToolID: func() string { return "tooluse_x" }}
	cases := []struct {
		name   string
		k      Blocks
		blocks []BlockSpec
		stop   string
		want   []Built
		stopW  string
	}{
		{"messages: thinking signed, text", Messages,
			[]BlockSpec{{Type: "thinking", Text: "plan"}, {Type: "text", Text: "hi"}}, "",
			[]Built{{Signature: Sign(secret, "plan")}, {}}, "end_turn"},
		{"messages: a given signature is kept", Messages,
			[]BlockSpec{{Type: "thinking", Text: "plan", Signature: &given}}, "",
			[]Built{{Signature: given}}, "end_turn"},
		{"converse: reasoning signed, tool_use with its id and input", converse,
			[]BlockSpec{{Type: "reasoning", Text: "plan"}, {Type: "tool_use", ToolName: "bash", ToolInput: map[string]any{"command": "ls"}}}, "",
			[]Built{{Signature: Sign(secret, "plan")}, {ID: "tooluse_x", InputJSON: `{"command":"ls"}`}}, "tool_use"},
		{"converse: a Messages name is not a Converse block", converse,
			[]BlockSpec{{Type: "thinking", Text: "plan"}, {Type: "tool_use", ToolID: "t1"}}, "max_tokens",
			[]Built{{}, {ID: "t1", InputJSON: `{}`}}, "max_tokens"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, stop := c.k.Build(c.blocks, c.stop, secret)
			if stop != c.stopW || len(got) != len(c.want) {
				t.Fatalf("stop %q, %d blocks; want %q, %d", stop, len(got), c.stopW, len(c.want))
			}
			for i, w := range c.want {
				w.Spec = c.blocks[i]
				if g := got[i]; g.Signature != w.Signature || g.ID != w.ID || g.InputJSON != w.InputJSON || g.Data != "" || g.Spec.Type != w.Spec.Type {
					t.Errorf("block %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestBuildGivesRedactedBlocksDataOfThisSecret(t *testing.T) {
	secret := []byte("s")
	converse := Blocks{Thinking: "reasoning", Redacted: "redacted", ToolID: func() string { return "" }}
	for _, c := range []struct {
		k    Blocks
		kind string
	}{{Messages, "redacted_thinking"}, {converse, "redacted"}} {
		got, _ := c.k.Build([]BlockSpec{{Type: c.kind}}, "", secret)
		if d := got[0].Data; !ValidRedactedData(secret, d) || ValidRedactedData([]byte("other"), d) || strings.TrimSpace(d) == "" {
			t.Errorf("%s: data %q is not redacted data of this secret", c.kind, d)
		}
	}
}
