package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestValidID(t *testing.T) {
	good := "prt_a1b2c3d4e5f6AbCdEfGhIjKlMn"
	if !ValidID(good, "prt") {
		t.Fatalf("%s should be valid", good)
	}
	for _, bad := range []string{
		"a1b2c3d4e5f6AbCdEfGhIjKlMn",     // no prefix
		"msg_a1b2c3d4e5f6AbCdEfGhIjKlMn", // wrong prefix for a part
		"prt_A1b2c3d4e5f6AbCdEfGhIjKlMn", // upper-case hex
		"prt_a1b2c3d4e5f6AbCdEfGhIjKlM",  // short
		"prt_a1b2c3d4e5f6AbCdEfGhIjKlM-", // not base62
		"prt_0000000000_thinking",        // the literal the brief warns against
	} {
		if ValidID(bad, "prt") {
			t.Errorf("%s should be invalid", bad)
		}
	}
}

func TestMintBetweenSortsBetween(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	cases := []struct{ lo, hi string }{
		{"prt_a1b2c3d4e5f6AbCdEfGhIjKlMn", "prt_a1b2c3d4e5f7AbCdEfGhIjKlMn"},
		{"prt_a1b2c3d4e5f6AbCdEfGhIjKlMn", "prt_a1b2c3d4e5f6AbCdEfGhIjKlMp"},
		{"", "prt_a1b2c3d4e5f6AbCdEfGhIjKlMn"},
		{"prt_a1b2c3d4e5f6AbCdEfGhIjKlMn", ""},
		{"prt_a1b2c3d4e5f6zzzzzzzzzzzzzz", "prt_a1b2c3d4e5f700000000000001"},
	}
	for _, c := range cases {
		id, err := MintBetween("prt", c.lo, c.hi, now)
		if err != nil {
			t.Fatalf("MintBetween(%q,%q): %v", c.lo, c.hi, err)
		}
		if !ValidID(id, "prt") {
			t.Errorf("minted %q is not a valid part id", id)
		}
		if c.lo != "" && id <= c.lo || c.hi != "" && id >= c.hi {
			t.Errorf("minted %q does not sort between %q and %q", id, c.lo, c.hi)
		}
		if c.lo != "" && c.hi == "" && id[:16] != c.lo[:16] && id[:15] != c.lo[:15] {
			t.Errorf("minted %q after %q drifted far from its neighbour", id, c.lo)
		}
	}
}

func TestMintBetweenNoRoom(t *testing.T) {
	_, err := MintBetween("prt", "prt_a1b2c3d4e5f6AbCdEfGhIjKlMn", "prt_a1b2c3d4e5f6AbCdEfGhIjKlMo", time.Now())
	if !errors.Is(err, ErrNoRoom) {
		t.Fatalf("adjacent ids: got %v, want ErrNoRoom", err)
	}
}

func TestMintBetweenNoBounds(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	id, err := MintBetween("msg", "", "", now)
	if err != nil || !ValidID(id, "msg") || !strings.HasPrefix(id, "msg_") {
		t.Fatalf("got %q, %v", id, err)
	}
	got, ok := IDTime(id, now)
	if !ok || got.UnixMilli() != now.UnixMilli() {
		t.Fatalf("IDTime(%s) = %v, want %v", id, got, now)
	}
}

func TestIDTimeAcrossWrap(t *testing.T) {
	// 2026-08-14 11:19:55 UTC is a wrap point: an id minted just before it and
	// read with a reference just after must still come out before the wrap.
	before := time.Date(2026, 8, 14, 11, 19, 0, 0, time.UTC)
	id, _ := MintBetween("prt", "", "", before)
	after := time.Date(2026, 8, 14, 12, 0, 0, 0, time.UTC)
	got, ok := IDTime(id, after)
	if !ok || !got.Equal(before) {
		t.Fatalf("IDTime across wrap = %v, want %v (id %s)", got, before, id)
	}
	wrapID, _ := MintBetween("prt", "", "", after)
	if wrapID >= id {
		t.Fatalf("after the wrap, new ids must sort before old ones: %s >= %s", wrapID, id)
	}
}

func TestSessionIDsDescendAsOpenCodes(t *testing.T) {
	// A session OpenCode 1.18.33 created at time_created 1795563674535.
	created := time.UnixMilli(1795563674535)
	real := "ses_df010a458ffeZMdXwKl0RHzajG"
	if got, ok := SessionIDTime(real, created.Add(time.Hour)); !ok || !got.Equal(created) {
		t.Fatalf("SessionIDTime(%s) = %v (ok %v), want %v", real, got, ok, created)
	}
	id := NewSessionID(created)
	if !ValidID(id, PrefixSession) || id[:16] != real[:16] {
		t.Fatalf("NewSessionID = %s, want the time digits of OpenCode's %s", id, real)
	}
	later := NewSessionID(created.Add(time.Millisecond))
	if later >= id {
		t.Errorf("a newer session's id %s does not sort before %s", later, id)
	}
}

func TestIDSeqMintsInOpenCodesOrder(t *testing.T) {
	now := time.Date(2026, 11, 25, 4, 0, 0, 0, time.UTC)
	q := NewIDSeq(now)
	ses := q.Descending(PrefixSession)
	var asc []string
	for i := 0; i < 5000; i++ { // past one millisecond's 4096 values
		p := PrefixMessage
		if i%3 != 0 {
			p = PrefixPart
		}
		asc = append(asc, q.Ascending(p))
	}
	if !ValidID(ses, PrefixSession) {
		t.Fatalf("session id %s is not in OpenCode's format", ses)
	}
	// OpenCode's first id of the millisecond: ms*4096+1; a session's is its
	// bitwise inverse.
	if want := fmt.Sprintf("%012x", ^(uint64(now.UnixMilli())*4096+1)&(1<<48-1)); ses[4:16] != want {
		t.Errorf("session id time digits %s, want %s", ses[4:16], want)
	}
	if later := NewIDSeq(now.Add(time.Second)).Descending(PrefixSession); later >= ses {
		t.Errorf("a later session id %s does not sort before %s", later, ses)
	}
	for i, id := range asc {
		if !ValidID(id, id[:3]) {
			t.Fatalf("id %s is not in OpenCode's format", id)
		}
		if at, ok := IDTime(id, now); !ok || at.Sub(now) < 0 || at.Sub(now) > 2*time.Millisecond {
			t.Errorf("id %s says %v, minted at %v", id, at, now)
		}
		if i > 0 && id[4:16] <= asc[i-1][4:16] {
			t.Fatalf("id %d (%s) does not sort after %s", i, id, asc[i-1])
		}
	}
}
