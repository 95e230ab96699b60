package fix

import "testing"

func TestDeleteJSON(t *testing.T) {
	for _, c := range []struct{ in, key, want string }{
		{"{\n  \"a\": 1,\n  \"revert\": {\n    \"messageID\": \"m\"\n  },\n  \"b\": 2\n}\n", "revert", "{\n  \"a\": 1,\n  \"b\": 2\n}\n"},
		{"{\n  \"revert\": {\"x\": 1},\n  \"b\": 2\n}", "revert", "{\n  \"b\": 2\n}"},
		{"{\n  \"a\": 1,\n  \"revert\": null\n}", "revert", "{\n  \"a\": 1\n}"},
		{`{"a":1,"revert":{"messageID":"m"}}`, "revert", `{"a":1}`},
		{`{"revert":1}`, "revert", `{}`},
		{"{\n  \"revert\": 1\n}\n", "revert", "{}\n"},
		{`{"a":"revert","b":{"revert":1}}`, "revert", `{"a":"revert","b":{"revert":1}}`},
	} {
		if got := string(DeleteJSON([]byte(c.in), c.key)); got != c.want {
			t.Errorf("DeleteJSON(%q, %q) = %q, want %q", c.in, c.key, got, c.want)
		}
	}
}
