package plural

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 sessions"}, {1, "1 session"}, {2, "2 sessions"}, {1000, "1000 sessions"}, {-1, "-1 sessions"}} {
		if got := Count(c.n, "session", "sessions"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if Word(1, "it", "them") != "it" || Word(2, "it", "them") != "them" {
		t.Error("Word picks the wrong noun")
	}
}
