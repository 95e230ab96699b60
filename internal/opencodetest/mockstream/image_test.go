package mockstream

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"testing"
)

func TestImageConfig(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 30, 20))); err != nil {
		t.Fatal(err)
	}
	good := base64.StdEncoding.EncodeToString(buf.Bytes())
	if cfg, ok := ImageConfig(good); !ok || cfg.Width != 30 || cfg.Height != 20 {
		t.Errorf("a 30x20 PNG: %v, %v", cfg, ok)
	}
	for name, data := range map[string]string{
		// The signature of a PNG and nothing an image is made of: a
		// check of the first bytes would take it.
		"signature only": base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n0000000000000000000000")),
		"riff webp junk": base64.StdEncoding.EncodeToString([]byte("RIFF\x10\x00\x00\x00WEBPjunkjunk")),
		"text":           base64.StdEncoding.EncodeToString([]byte("hello, this is no image")),
		"not base64":     "%%%" + good,
		"empty":          "",
	} {
		if _, ok := ImageConfig(data); ok {
			t.Errorf("%s: read as an image", name)
		}
	}
}

// The test images every mock takes: a 1×1 image of each type, and a PNG of
// an exact size.
func TestTinyImages(t *testing.T) {
	for _, mime := range []string{"image/png", "image/jpeg", "image/gif", "image/webp"} {
		if cfg, ok := ImageConfig(TinyImage(mime)); !ok || cfg.Width != 1 || cfg.Height != 1 {
			t.Errorf("TinyImage(%s): %v, %v", mime, cfg, ok)
		}
	}
	for _, n := range []int{100, 101, 102, 5_000_000} {
		data := PNGOfSize(n)
		raw, err := base64.StdEncoding.DecodeString(data)
		if err != nil || len(raw) != n {
			t.Errorf("PNGOfSize(%d): %d bytes, %v", n, len(raw), err)
		}
		if _, ok := ImageConfig(data); !ok {
			t.Errorf("PNGOfSize(%d) is not read as an image", n)
		}
	}
}
