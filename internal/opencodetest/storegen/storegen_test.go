package storegen

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
)

func TestSessionIsDeterministic(t *testing.T) {
	cfg := Config{Sessions: 3, Messages: 12, Parts: 6, ToolOutput: 500, Seed: 3}
	a, b := cfg.Session(1), cfg.Session(1)
	if a.ID != b.ID || len(a.Messages) != len(b.Messages) {
		t.Fatalf("two generations of session 1 differ: %s/%d vs %s/%d", a.ID, len(a.Messages), b.ID, len(b.Messages))
	}
	for i := range a.Messages {
		if !bytes.Equal(a.Messages[i].Body, b.Messages[i].Body) {
			t.Fatalf("message %d differs between two generations", i)
		}
	}
	if c := cfg.Session(2); c.ID == a.ID {
		t.Errorf("sessions 1 and 2 share the id %s", a.ID)
	}
	other := cfg
	other.Seed = 4
	if c := other.Session(1); c.ID == a.ID {
		t.Errorf("seeds 3 and 4 give session 1 the same id %s", a.ID)
	}
}

func TestSessionShape(t *testing.T) {
	cfg := Config{Sessions: 1, Messages: 40, Parts: 7, ToolOutput: 1000, DefectRate: -1}
	s := cfg.Session(0)
	if !store.ValidID(s.ID, store.PrefixSession) {
		t.Errorf("session id %q is not in OpenCode's format", s.ID)
	}
	if len(s.Messages) != 40 || len(s.Defects) != 0 {
		t.Fatalf("%d messages and %d defects, want 40 and 0", len(s.Messages), len(s.Defects))
	}
	prevMsg := ""
	for i, m := range s.Messages {
		if !store.ValidID(m.ID, store.PrefixMessage) || m.ID <= prevMsg {
			t.Fatalf("message %d id %q is invalid or not after %q", i, m.ID, prevMsg)
		}
		prevMsg = m.ID
		want := 7
		if i%4 == 0 {
			want = 1
		}
		if len(m.Parts) != want {
			t.Fatalf("message %d has %d parts, want %d", i, len(m.Parts), want)
		}
		prevPart := ""
		for _, p := range m.Parts {
			if !store.ValidID(p.ID, store.PrefixPart) || p.ID <= prevPart {
				t.Fatalf("message %d: part id %q is invalid or not after %q", i, p.ID, prevPart)
			}
			prevPart = p.ID
			if store.CheckBody(p.Body) != nil {
				t.Fatalf("part %s: body is not a JSON object: %s", p.ID, p.Body)
			}
		}
	}
}

func TestGenerateEveryShape(t *testing.T) {
	cfg := Config{Sessions: 4, Messages: 16, Parts: 5, ToolOutput: 300, DefectRate: 0.2, Seed: 9}
	for _, shape := range []store.Shape{store.ShapeSQLite, store.ShapeStorage, store.ShapeProject, store.ShapeSessions, store.ShapeExport} {
		t.Run(string(shape), func(t *testing.T) {
			cfg := cfg
			if shape == store.ShapeExport {
				cfg.Sessions = 1
			}
			path, st, err := Generate(shape, t.TempDir(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			d, err := shapes.Open([]string{path})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if len(d.Stores) != 1 || d.Stores[0].Info().Shape != shape {
				t.Fatalf("%s opened as %d stores, want one %s store", path, len(d.Stores), shape)
			}
			refs, err := d.Stores[0].List(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(refs) != cfg.Sessions || st.Sessions != cfg.Sessions {
				t.Fatalf("listed %d sessions, stats say %d, want %d", len(refs), st.Sessions, cfg.Sessions)
			}
			parts, broken := 0, 0
			for _, ref := range refs {
				s, err := d.Stores[0].Load(context.Background(), ref)
				if err != nil {
					t.Fatal(err)
				}
				parts += s.PartCount()
				broken += len(s.Broken)
			}
			if parts+broken != st.Parts {
				t.Errorf("loaded %d parts and %d broken records, generated %d parts", parts, broken, st.Parts)
			}
			if broken != st.Defects[DefectTruncatedRecord] {
				t.Errorf("%d broken records, generated %d truncated ones", broken, st.Defects[DefectTruncatedRecord])
			}
		})
	}
}

func TestGenerateIsByteIdentical(t *testing.T) {
	cfg := Config{Sessions: 3, Messages: 8, Parts: 5, ToolOutput: 300, DefectRate: 0.3, Seed: 5}
	a, _, err := Generate(store.ShapeSessions, t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := Generate(store.ShapeSessions, t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = filepath.WalkDir(a, func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(a, p)
		x, _ := os.ReadFile(p)
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two generations (%v)", rel, err)
		}
		n++
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("compared %d files: %v", n, err)
	}
}

func TestGenerateRefusesExistingStore(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sessions"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Generate(store.ShapeSessions, dir, Config{Sessions: 1}); err == nil {
		t.Fatal("Generate wrote into an existing store")
	}
	if _, _, err := Generate(store.ShapeExport, t.TempDir(), Config{Sessions: 2}); err == nil {
		t.Fatal("Generate wrote two sessions into one export file")
	}
}

// TestImages: a session of an image-heavy config holds its images, half
// pasted (file parts) and half returned by the read tool (attachments),
// each a PNG header of ImageWidth×ImageHeight px and about ImageBytes of
// base64; a config without images keeps its cache key, so the stores
// generated before the option are not generated again.
func TestImages(t *testing.T) {
	cfg := Config{Sessions: 1, Messages: 24, Parts: 5, ToolOutput: 300, DefectRate: -1, Images: 9, ImageBytes: 4096}
	s := cfg.Session(0)
	if s.Images != 9 {
		t.Fatalf("%d images, want 9", s.Images)
	}
	var pasted, returned int
	for _, m := range s.Messages {
		for _, p := range m.Parts {
			var body struct {
				Type, URL string
				State     struct{ Attachments []struct{ Mime, URL string } }
			}
			if err := json.Unmarshal(p.Body, &body); err != nil {
				t.Fatal(err)
			}
			urls := []string{body.URL}
			if body.Type == "file" {
				pasted++
			} else {
				urls = nil
				for _, a := range body.State.Attachments {
					urls = append(urls, a.URL)
					returned++
				}
			}
			for _, u := range urls {
				data, ok := strings.CutPrefix(u, "data:image/png;base64,")
				if !ok {
					continue
				}
				if len(data) < 4000 || len(data) > 4200 {
					t.Errorf("an image of %d bytes of base64, want about 4096", len(data))
				}
				raw, err := base64.StdEncoding.DecodeString(data)
				if err != nil {
					t.Fatal(err)
				}
				c, err := png.DecodeConfig(bytes.NewReader(raw))
				if err != nil || c.Width != ImageWidth || c.Height != ImageHeight {
					t.Errorf("image header: %dx%d, %v", c.Width, c.Height, err)
				}
			}
		}
	}
	if pasted != 5 || returned != 4 {
		t.Errorf("%d pasted and %d returned images, want 5 and 4", pasted, returned)
	}
	key, err := json.Marshal(Default)
	if err != nil || bytes.Contains(key, []byte("Image")) {
		t.Errorf("the default config's key names the image options: %s", key)
	}
}
