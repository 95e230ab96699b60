package fix

import (
	"strings"
	"testing"
)

func TestSetJSONPrettyKeepsEveryOtherByte(t *testing.T) {
	// Odd spacing and unknown keys must survive untouched.
	raw := []byte("{\n  \"id\": \"x\",\n  \"state\": {\n    \"status\": \"running\",\n    \"input\": {\"cmd\": \"ls\"},\n    \"time\": {\n      \"start\": 5\n    }\n  },\n  \"x-unknown\":   [1,2]\n}\n")
	cases := []struct {
		name string
		v    any
		keys []string
		want string
	}{
		{"replace existing", "error", []string{"state", "status"},
			"{\n  \"id\": \"x\",\n  \"state\": {\n    \"status\": \"error\",\n    \"input\": {\"cmd\": \"ls\"},\n    \"time\": {\n      \"start\": 5\n    }\n  },\n  \"x-unknown\":   [1,2]\n}\n"},
		{"insert into nested object", int64(7), []string{"state", "time", "end"},
			"{\n  \"id\": \"x\",\n  \"state\": {\n    \"status\": \"running\",\n    \"input\": {\"cmd\": \"ls\"},\n    \"time\": {\n      \"start\": 5,\n      \"end\": 7\n    }\n  },\n  \"x-unknown\":   [1,2]\n}\n"},
		{"create missing objects", true, []string{"state", "metadata", "interrupted"},
			"{\n  \"id\": \"x\",\n  \"state\": {\n    \"status\": \"running\",\n    \"input\": {\"cmd\": \"ls\"},\n    \"time\": {\n      \"start\": 5\n    },\n    \"metadata\": {\n      \"interrupted\": true\n    }\n  },\n  \"x-unknown\":   [1,2]\n}\n"},
		{"insert at top level", obj().set("name", "E").set("data", obj().set("message", "m <b>")), []string{"error"},
			"{\n  \"id\": \"x\",\n  \"state\": {\n    \"status\": \"running\",\n    \"input\": {\"cmd\": \"ls\"},\n    \"time\": {\n      \"start\": 5\n    }\n  },\n  \"x-unknown\":   [1,2],\n  \"error\": {\n    \"name\": \"E\",\n    \"data\": {\n      \"message\": \"m <b>\"\n    }\n  }\n}\n"},
		{"replace scalar with object", obj().set("a", 1), []string{"id"},
			"{\n  \"id\": {\n    \"a\": 1\n  },\n  \"state\": {\n    \"status\": \"running\",\n    \"input\": {\"cmd\": \"ls\"},\n    \"time\": {\n      \"start\": 5\n    }\n  },\n  \"x-unknown\":   [1,2]\n}\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := setJSON(raw, c.v, c.keys...)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
		// The same body with Windows line endings keeps them on new lines.
		t.Run(c.name+" CRLF", func(t *testing.T) {
			crlf := strings.NewReplacer("\n", "\r\n")
			got, err := setJSON([]byte(crlf.Replace(string(raw))), c.v, c.keys...)
			if err != nil {
				t.Fatal(err)
			}
			if want := crlf.Replace(c.want); string(got) != want {
				t.Errorf("got\n%q\nwant\n%q", got, want)
			}
		})
	}
}

func TestSetJSONCompact(t *testing.T) {
	raw := []byte(`{"type":"tool","state":{"status":"pending","input":{}},"z":1}`)
	got, err := setJSON(raw, int64(9), "state", "time", "end")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"tool","state":{"status":"pending","input":{},"time":{"end":9}},"z":1}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	got, err = setJSON([]byte(`{}`), "v", "k")
	if err != nil || string(got) != `{"k":"v"}` {
		t.Errorf("empty object: got %s, %v", got, err)
	}
	got, err = setJSON([]byte("{\n  \"a\": {}\n}"), "v", "a", "k")
	if err != nil || string(got) != "{\n  \"a\": {\n    \"k\": \"v\"\n  }\n}" {
		t.Errorf("empty pretty object: got %q, %v", got, err)
	}
}

func TestSetJSONRejectsNonObjects(t *testing.T) {
	for _, raw := range []string{``, `[1]`, `{"a":`} {
		if _, err := setJSON([]byte(raw), 1, "a"); err == nil {
			t.Errorf("setJSON(%q) should fail", raw)
		}
	}
}

func TestDetectLayout(t *testing.T) {
	if l := detectLayout([]byte(`{"a":1}`)); l.pretty {
		t.Errorf("compact body detected as pretty")
	}
	l := detectLayout([]byte("{\n    \"a\": 1\n}\n"))
	if !l.pretty || l.unit != "    " || !l.nl {
		t.Errorf("got %+v, want pretty with 4-space unit and newline", l)
	}
	l = detectLayout([]byte("{\n  \"a\": 1\n}"))
	if !l.pretty || l.unit != "  " || l.nl {
		t.Errorf("got %+v, want pretty with 2-space unit and no newline", l)
	}
}
