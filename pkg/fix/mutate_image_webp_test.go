package fix

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestShrinkImageRealWebP: real WebP files, as cwebp 1.2 wrote them from a
// 9000×60 gradient (testdata/webp: lossy VP8, lossless VP8L, and lossy
// with alpha, which is the extended VP8X form), are found over the 8000 px
// side from their headers and scaled to 8000 px wide, their aspect ratio
// kept, into a format the provider accepts, with the mime type to match.
func TestShrinkImageRealWebP(t *testing.T) {
	for _, name := range []string{"wide-lossy.webp", "wide-lossless.webp", "wide-alpha.webp"} {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "webp", name))
			if err != nil {
				t.Fatal(err)
			}
			s := imageSession(t, store.ShapeStorage, storetest.Image{Mime: "image/webp", Filename: "shot.png", Base64: base64.StdEncoding.EncodeToString(raw)})
			_, cfg, format, _ := shrunkPart(t, s, "SF171")
			if cfg.Width != 8000 || cfg.Height != 53 {
				t.Errorf("shrunk to %d×%d, want 8000×53", cfg.Width, cfg.Height)
			}
			if format != "png" && format != "jpeg" {
				t.Errorf("shrunk to %s, want png or jpeg", format)
			}
		})
	}
}
