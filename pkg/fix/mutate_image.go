package fix

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	_ "image/gif" // decoder for image.Decode
	"image/jpeg"
	"image/png"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp" // decoder for image.Decode

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

var stShrink = Strategy{Name: "shrink", Mutations: "shrinkImage", Doc: "decode the pasted image, scale it within the side limit and re-encode it (png kept when it fits, else jpeg) until its base64 is under the size limit with a margin; mime updated, filename kept"}

// shrinkTarget is the most base64 a shrunk image may have: 1 MiB under
// Anthropic's 5 MB limit (5,242,880 bytes), so a shrunk image never sits
// at the edge of it. Under a smaller limit (an image's share of OpenAI's
// 50 MB a request) the target is four fifths of that limit, the same
// margin.
const shrinkTarget = 4 << 20

// maxDecodePixels bounds the images shrinkImage decodes (4 bytes a pixel
// once decoded): a larger one is not repaired.
const maxDecodePixels = 1 << 27

// jpegQualities are the qualities tried, best first, before the image is
// scaled down further.
var jpegQualities = []int{85, 70, 55}

// shrinkImage re-encodes the images a part sends, a user's file part (a
// data: URL with base64) or the image attachments of a tool part (the read
// tool's), so that both sides of each are within the side limit of the
// session's next request and its base64 is at most shrinkTarget: scaled
// down, a PNG (GIF, WebP: written as PNG) kept as PNG when that fits, else
// JPEG at decreasing quality, then scaled down further. mime and the
// URL's type follow the new format; the filename is kept. Images already
// within the limits get no edit; a part none of whose images over a limit
// decodes is errNotApplicable.
func shrinkImage(s *store.Session, m *store.Message, p *store.Part) ([]store.Edit, error) {
	switch typ := p.Get("type").String(); {
	case typ == "file" && m.Role == "user":
		return shrinkParts(s, m, p, [][]string{nil})
	case typ == "tool":
		var at [][]string
		for i, a := range p.Get("state.attachments").Array() {
			if strings.HasPrefix(a.Get("mime").String(), "image/") {
				at = append(at, []string{"state", "attachments", strconv.Itoa(i)})
			}
		}
		return shrinkParts(s, m, p, at)
	}
	return nil, errNotApplicable
}

// shrinkParts shrinks the images of p at each path (nil for the part's
// own url and mime, state.attachments.N for an attachment's) in one edit.
func shrinkParts(s *store.Session, m *store.Message, p *store.Part, paths [][]string) ([]store.Edit, error) {
	maxBase64, side := opencode.ImageLimits(s)
	after, changed, failed := p.Raw, []string(nil), 0
	for _, path := range paths {
		data, ok := opencode.Base64Data(gjson.GetBytes(after, strings.Join(append(slices.Clip(path), "url"), ".")).String())
		if !ok {
			continue
		}
		out, mime, desc, err := shrinkData(data, maxBase64, side)
		if err != nil {
			failed++
			continue
		}
		if out == "" {
			continue // within the limits
		}
		if after, err = setImage(after, path, out, mime); err != nil {
			return nil, fmt.Errorf("part %s: %w", p.ID, err)
		}
		changed = append(changed, desc)
	}
	if len(changed) == 0 {
		if failed > 0 {
			return nil, errNotApplicable
		}
		return nil, nil
	}
	what := "image shrunk from " + changed[0]
	if len(changed) > 1 {
		what = fmt.Sprintf("%d images shrunk: %s", len(changed), strings.Join(changed, "; "))
	}
	ed := partEdit(store.OpUpdate, m, p, "shrinkImage", what)
	ed.After = after
	return []store.Edit{ed}, nil
}

// setImage sets the image at path in a part's body (nil for a file
// part's own url and mime, state.attachments.N for an attachment's) to
// base64 data of type mime: the data: URL, and mime where it differs.
func setImage(raw []byte, path []string, data, mime string) ([]byte, error) {
	url, mimeKey := append(slices.Clip(path), "url"), append(slices.Clip(path), "mime")
	out, err := setJSON(raw, "data:"+mime+";base64,"+data, url...)
	if err == nil && !strings.EqualFold(gjson.GetBytes(out, strings.Join(mimeKey, ".")).String(), mime) {
		out, err = setJSON(out, mime, mimeKey...)
	}
	return out, err
}

// shrinkData re-encodes one image's base64 data within side px and
// shrinkTarget bytes, and describes the change; out is "" when the image
// is within maxBase64 and side already. Data that does not decode is
// errNotApplicable.
func shrinkData(data string, maxBase64, side int) (out, mime, desc string, err error) {
	return shrinkDataTo(data, maxBase64, side, min(shrinkTarget, maxBase64/5*4), 0)
}

// shrinkDataTo is shrinkData with the target given: out is "" when the
// image is within limit and side already, else at most target bytes of
// base64. A mark time (mark > 0) goes into the image written
// (opencode.MarkShrunk).
func shrinkDataTo(data string, limit, side, target int, mark int64) (out, mime, desc string, err error) {
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return "", "", "", errNotApplicable
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > maxDecodePixels {
		return "", "", "", errNotApplicable
	}
	if len(data) <= limit && cfg.Width <= side && cfg.Height <= side {
		return "", "", "", nil
	}
	src, _, err := opencode.DecodeImage(raw)
	raw = nil
	if err != nil {
		return "", "", "", errNotApplicable
	}
	out, mime, size := shrink(src, format, side, target, mark)
	if out == "" {
		return "", "", "", errNotApplicable
	}
	desc = fmt.Sprintf("%d×%d px, %d bytes of base64, to %d×%d px %s, %d bytes",
		cfg.Width, cfg.Height, len(data), size.X, size.Y, mime, len(out))
	return out, mime, desc, nil
}

// shrink encodes src within side px on each side and target bytes of
// base64: PNG first unless src is a JPEG, then JPEG at each of
// jpegQualities, then at a smaller scale, a few times. An encoding whose
// estimate (worth) is well over target is not tried, but the last
// quality at each scale. A mark time (mark > 0) goes into what is written,
// within target. It returns the base64, its mime type and the size
// written; "" when nothing fits.
func shrink(src image.Image, format string, side, target int, mark int64) (string, string, image.Point) {
	b := src.Bounds()
	scale := math.Min(1, float64(side)/float64(max(b.Dx(), b.Dy())))
	for range 8 {
		size := image.Pt(max(1, int(float64(b.Dx())*scale)), max(1, int(float64(b.Dy())*scale)))
		img := scaled(src, size)
		var out string
		var n int
		if format != "jpeg" && worth(img, "png", 0, target) {
			if out, n = encodeB64(img, "png", 0, mark); n <= target {
				return out, "image/png", size
			}
		}
		flat := flatten(img)
		for i, q := range jpegQualities {
			if i < len(jpegQualities)-1 && !worth(flat, "jpeg", q, target) {
				continue
			}
			if out, n = encodeB64(flat, "jpeg", q, mark); n <= target {
				return out, "image/jpeg", size
			}
		}
		// The base64 grows about with the pixel count: scale by the
		// square root of what is too much, and a little more.
		scale *= math.Min(0.9, math.Sqrt(float64(target)/float64(n))*0.95)
	}
	return "", "", image.Point{}
}

// sampleSide is the side of the crop worth encodes to estimate a whole
// encoding's size.
const sampleSide = 512

// worth reports whether encoding img whole may fit target: the size of
// a centred crop, encoded so, scaled to the whole image's pixel count, is
// under 1.4 times target. It saves encoding a large image that cannot fit
// (noise as PNG) at the cost of a small one.
func worth(img image.Image, format string, q, target int) bool {
	b := img.Bounds()
	if b.Dx()*b.Dy() <= 4*sampleSide*sampleSide {
		return true
	}
	c := image.Rect(0, 0, min(sampleSide, b.Dx()), min(sampleSide, b.Dy())).
		Add(b.Min).Add(image.Pt((b.Dx()-min(sampleSide, b.Dx()))/2, (b.Dy()-min(sampleSide, b.Dy()))/2))
	sub, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	})
	if !ok {
		return true
	}
	_, n := encodeB64(sub.SubImage(c), format, q, 0)
	est := float64(n) * float64(b.Dx()*b.Dy()) / float64(c.Dx()*c.Dy())
	return est <= 1.4*float64(target)
}

// scaled is src scaled to size (src itself at its own size), by Catmull-Rom.
func scaled(src image.Image, size image.Point) image.Image {
	if src.Bounds().Size() == size {
		return src
	}
	dst := image.NewNRGBA(image.Rectangle{Max: size})
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
	return dst
}

// flatten puts an image with transparency on white, as JPEG has no alpha
// (else transparent pixels would turn black).
func flatten(img image.Image) image.Image {
	if o, ok := img.(interface{ Opaque() bool }); ok && o.Opaque() {
		return img
	}
	dst := image.NewRGBA(img.Bounds())
	draw.Draw(dst, dst.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.Draw(dst, dst.Bounds(), img, img.Bounds().Min, draw.Over)
	return dst
}

// encodeB64 encodes img as PNG or JPEG (at quality q), with sessfix's
// shrink mark of that time in it when mark > 0 (opencode.MarkShrunk), and
// returns its base64 and the base64's length.
func encodeB64(img image.Image, format string, q int, mark int64) (string, int) {
	var buf bytes.Buffer
	var err error
	if format == "png" {
		err = png.Encode(&buf, img)
	} else {
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: q})
	}
	if err != nil {
		return "", math.MaxInt
	}
	b := buf.Bytes()
	if mark > 0 {
		b = opencode.MarkShrunk(b, format, mark)
	}
	out := base64.StdEncoding.EncodeToString(b)
	return out, len(out)
}
