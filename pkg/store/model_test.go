package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
)

func TestSessionRecordsAndLastModified(t *testing.T) {
	at := func(min int) time.Time { return time.Date(2026, 1, 1, 0, min, 0, 0, time.UTC) }
	rec := func(id string, min int) store.Record { return store.Record{ID: id, Modified: at(min)} }
	s := &store.Session{
		Info:     &store.Record{ID: "ses", Modified: at(1)},
		Messages: []*store.Message{{Record: rec("m1", 2), Parts: []*store.Part{{Record: rec("p1", 3)}}}, {Record: rec("m2", 4)}},
		Broken:   []*store.Record{{ID: "b1", Modified: at(5)}},
		Orphans:  []*store.Part{{Record: rec("o1", 9)}},
	}
	var ids []string
	for r := range s.Records() {
		ids = append(ids, r.ID)
	}
	if got, want := ids, []string{"ses", "m1", "p1", "m2", "b1", "o1"}; !slices.Equal(got, want) {
		t.Errorf("Records = %v, want %v", got, want)
	}
	// An orphaned part being written keeps the session unsettled.
	if got := s.LastModified(); !got.Equal(at(9)) {
		t.Errorf("LastModified = %v, want the orphan's %v", got, at(9))
	}
	n := 0
	for range s.Records() {
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("Records did not stop when asked: %d", n)
	}
	if !(&store.Session{}).LastModified().IsZero() {
		t.Error("an empty session has a modification time")
	}
}
