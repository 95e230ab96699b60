package mockstream

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/gif"  // and its decoder for image.DecodeConfig
	"image/jpeg" // and its decoder for image.DecodeConfig
	"image/png"  // and its decoder for image.DecodeConfig

	_ "golang.org/x/image/webp" // decoder for image.DecodeConfig
)

// ImageConfig decodes base64 data as the header of a PNG, JPEG, GIF or WebP
// image, the four types every provider's vision input names, and returns
// its dimensions; ok is false for data that is not base64 or whose header
// is not one of those images (image.DecodeConfig fails). Every mock judges
// an image this way: a provider refuses data it cannot read as an image
// (OBSERVED.md says with which text), and no mock accepts an image on its
// first bytes alone.
func ImageConfig(data string) (cfg image.Config, ok bool) {
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return image.Config{}, false
	}
	cfg, _, err = image.DecodeConfig(bytes.NewReader(raw))
	return cfg, err == nil
}

// tinyWebP is a 1×1 lossless WebP image, base64: the standard library
// encodes the other three types, none WebP.
const tinyWebP = "UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=="

// tinyImage is the raw bytes of a 1×1 image of mime (image/png, image/jpeg,
// image/gif), or nil.
func tinyImage(mime string) []byte {
	var buf bytes.Buffer
	m := image.NewGray(image.Rect(0, 0, 1, 1))
	var err error
	switch mime {
	case "image/png":
		err = png.Encode(&buf, m)
	case "image/jpeg":
		err = jpeg.Encode(&buf, m, nil)
	case "image/gif":
		err = gif.Encode(&buf, m, nil)
	default:
		return nil
	}
	if err != nil {
		panic(err) // encoding a 1×1 image into memory does not fail
	}
	return buf.Bytes()
}

// TinyImage is base64 of a 1×1 image of mime (image/png, image/jpeg,
// image/gif or image/webp): the smallest data every mock takes as an image.
func TinyImage(mime string) string {
	if mime == "image/webp" {
		return tinyWebP
	}
	raw := tinyImage(mime)
	if raw == nil {
		panic("mockstream.TinyImage: no image of type " + mime)
	}
	return base64.StdEncoding.EncodeToString(raw)
}

// PNGOfSize is base64 of exactly n bytes that the mocks take as a PNG: a
// 1×1 image followed by zeros up to n (the mocks read an image's header,
// and its size from the data's length). n must be at least the image's
// size, under 100 bytes.
func PNGOfSize(n int) string {
	raw := tinyImage("image/png")
	if n < len(raw) {
		panic(fmt.Sprintf("mockstream.PNGOfSize(%d): a PNG takes at least %d bytes", n, len(raw)))
	}
	return base64.StdEncoding.EncodeToString(append(raw, make([]byte, n-len(raw))...))
}
