package undo

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestShrinkImageUndoRoundTrip: fix with default flags shrinks a pasted
// 9000 px screenshot through the backup journal, the store then holds a
// PNG of 8000 px, and undo --last puts back every byte.
func TestShrinkImageUndoRoundTrip(t *testing.T) {
	wide := storetest.NoisyPNG(t, 7, 9000, 90)
	for _, shape := range []store.Shape{store.ShapeStorage, store.ShapeSQLite} {
		t.Run(string(shape), func(t *testing.T) {
			path := storetest.Materialize(t, shape, t.TempDir(), storetest.ImageSession(storetest.Image{Mime: "image/png", Filename: "shot.png", Base64: wide}))
			storetest.SetTimes(t, path, clock.Add(-24*time.Hour))
			journal := backup.Options{Dir: t.TempDir(), Now: func() time.Time { return clock }}
			before := storetest.Hash(t, path, shape)

			if out := fixBackedUp(t, path, journal); !strings.Contains(out, "sessfix undo ") {
				t.Fatalf("no undo command in:\n%s", out)
			}
			s := storetest.LoadAll(t, storetest.OpenOne(t, path))[0]
			url := s.Message(storetest.ImageUserID).Parts[1].Get("url").String()
			if storetest.Hash(t, path, shape) == before || url == "data:image/png;base64,"+wide || !strings.HasPrefix(url, "data:image/png;base64,") {
				t.Fatalf("fix did not shrink the image: %.60s… (%d bytes)", url, len(url))
			}

			f, _, errOut := factory()
			if err := RunUndo(context.Background(), &UndoOptions{Factory: f, Last: true, Backup: journal}); err != nil {
				t.Fatalf("undo: %v\n%s", err, errOut)
			}
			if storetest.Hash(t, path, shape) != before {
				t.Error("undo did not restore the store")
			}
		})
	}
}
