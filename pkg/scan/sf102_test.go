package scan

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestThinkingOnlyUnsignedFollowsTheRequest checks SF102 on its own (the
// preflight's findings would replace it): unsigned thinking that OpenCode
// drops together with its message is info, unsigned thinking whose message
// is still sent, empty, is the provider error.
func TestThinkingOnlyUnsignedFollowsTheRequest(t *testing.T) {
	fx, err := storetest.LoadExportFixture(filepath.Join(fixtureRoot, "sf102-unsigned-thinking-only", "session.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Severity{
		"msg_cb7dc6cfc0002FclF30lXHAKeg": Info,  // killed before any thinking text: dropped
		"msg_cb7dc7400000UnsgndThnkMsg2": Error, // thinking text, no signature: sent empty
	}
	for _, shape := range []store.Shape{store.ShapeSQLite, store.ShapeStorage} {
		t.Run(string(shape), func(t *testing.T) {
			st := storetest.OpenOne(t, storetest.Materialize(t, shape, t.TempDir(), fx))
			s := storetest.LoadAll(t, st)[0]
			now := s.LastModified().Add(time.Hour)
			got := map[string]Severity{}
			for _, f := range CheckSession(s, &Options{Select: []string{"SF102"}, Now: func() time.Time { return now }}) {
				got[f.MessageID] = f.Severity
				if (f.Severity == Error) != (f.ProviderError == emptyContentError) {
					t.Errorf("%s at %s names provider error %q", f.Severity, f.MessageID, f.ProviderError)
				}
			}
			if len(got) != len(want) {
				t.Errorf("SF102 reported %v, want %v", got, want)
			}
			for id, sev := range want {
				if got[id] != sev {
					t.Errorf("SF102 at %s: %q, want %q", id, got[id], sev)
				}
			}
		})
	}
}
