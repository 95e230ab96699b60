package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// benchBodies are part bodies shaped like OpenCode's: a tool call with a
// few KB of escaped code output, a signed reasoning part and a text part.
func benchBodies() [][]byte {
	var out strings.Builder
	for i := range 60 {
		fmt.Fprintf(&out, "%5d\tfunc (s *store) item%d(ctx context.Context, key string) error {\n\t\treturn \"x\"\n", i, i)
	}
	tool, _ := json.MarshalIndent(map[string]any{
		"id": "prt_b86f32f850012AkBLIukpVpnW7", "sessionID": "ses_4790d787fffervP61iJOQ7nHHX",
		"messageID": "msg_b86f32643001casdIHhH4LDsEC", "type": "tool", "callID": "toolu_JS9uWvdsYkgeV3ZhdMgeYEsj",
		"tool": "grep", "state": map[string]any{
			"status": "completed", "input": map[string]any{"path": "/home/dev/project", "pattern": "func"},
			"output": out.String(), "title": "func", "metadata": map[string]any{"matches": 60, "truncated": false},
			"time": map[string]any{"start": 1763000000000, "end": 1763000000100},
		},
	}, "", "  ")
	reasoning, _ := json.MarshalIndent(map[string]any{
		"id": "prt_b86f32f850012AkBLIukpVpnW8", "sessionID": "ses_4790d787fffervP61iJOQ7nHHX",
		"messageID": "msg_b86f32643001casdIHhH4LDsEC", "type": "reasoning",
		"text":     strings.Repeat("Let me look at the store first, then the tests. ", 20),
		"metadata": map[string]any{"anthropic": map[string]any{"signature": strings.Repeat("EqQBCkgIARABGAIiQL", 24)}},
		"time":     map[string]any{"start": 1763000000000, "end": 1763000000100},
	}, "", "  ")
	text, _ := json.MarshalIndent(map[string]any{
		"id": "prt_b86f32f850012AkBLIukpVpnW9", "sessionID": "ses_4790d787fffervP61iJOQ7nHHX",
		"messageID": "msg_b86f32643001casdIHhH4LDsEC", "type": "text",
		"text": strings.Repeat("The fix is in `pkg/store`: \"quoted\" words and a newline.\n", 8),
	}, "", "  ")
	return [][]byte{tool, reasoning, text}
}

// BenchmarkCheckBody measures validating and indexing record bodies, the
// per-byte cost every scan pays on top of reading the store.
func BenchmarkCheckBody(b *testing.B) {
	bodies := benchBodies()
	n := 0
	for _, body := range bodies {
		n += len(body)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, body := range bodies {
			if _, err := checkBody(body); err != nil {
				b.Fatal(err)
			}
		}
	}
}
