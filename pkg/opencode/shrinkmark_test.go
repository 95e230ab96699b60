package opencode

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"
)

// A JPEG and a PNG carry the mark after MarkShrunk and still decode to
// the same picture; ShrunkAt reads the time back from the base64, and
// finds none in an unmarked image or data of another kind.
func TestShrinkMark(t *testing.T) {
	src := image.NewNRGBA(image.Rect(0, 0, 40, 30))
	for i := range src.Pix {
		src.Pix[i] = byte(i * 7)
	}
	const at = int64(1796435116357)
	for _, format := range []string{"jpeg", "png"} {
		var buf bytes.Buffer
		var err error
		if format == "png" {
			err = png.Encode(&buf, src)
		} else {
			err = jpeg.Encode(&buf, src, &jpeg.Options{Quality: 90})
		}
		if err != nil {
			t.Fatal(err)
		}
		plain := buf.Bytes()
		if got := ShrunkAt(base64.StdEncoding.EncodeToString(plain)); got != 0 {
			t.Errorf("%s: an unmarked image reads as shrunk at %d", format, got)
		}
		marked := MarkShrunk(plain, format, at)
		if len(marked) <= len(plain) {
			t.Fatalf("%s: no mark written", format)
		}
		if got := ShrunkAt(base64.StdEncoding.EncodeToString(marked)); got != at {
			t.Errorf("%s: ShrunkAt = %d, want %d", format, got, at)
		}
		a, gotFormat, err := image.Decode(bytes.NewReader(plain))
		if err != nil {
			t.Fatal(err)
		}
		b, markedFormat, err := image.Decode(bytes.NewReader(marked))
		if err != nil || markedFormat != gotFormat {
			t.Fatalf("%s: the marked image does not decode: %v (%s)", format, err, markedFormat)
		}
		if a.Bounds() != b.Bounds() {
			t.Fatalf("%s: bounds %v, want %v", format, b.Bounds(), a.Bounds())
		}
		for y := 0; y < a.Bounds().Dy(); y++ {
			for x := 0; x < a.Bounds().Dx(); x++ {
				if color.NRGBAModel.Convert(a.At(x, y)) != color.NRGBAModel.Convert(b.At(x, y)) {
					t.Fatalf("%s: pixel %d,%d differs after the mark", format, x, y)
				}
			}
		}
	}
	for _, other := range [][]byte{[]byte("%PDF-1.7\n"), []byte("GIF89a"), nil} {
		if got := MarkShrunk(other, "png", at); !bytes.Equal(got, other) {
			t.Errorf("MarkShrunk changed data that is no PNG: %q", got)
		}
	}
	if got := ShrunkAt("not base64!"); got != 0 {
		t.Errorf("ShrunkAt of data that is no base64 = %d", got)
	}
}
