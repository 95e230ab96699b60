package opencode

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"strconv"
	"strings"

	"github.com/sessfix/sessfix/pkg/store"
)

// shrinkMarkPrefix starts the mark sessfix writes into an image it
// re-encoded to repair a request refused for its size (SF180), followed
// by the repair's time in Unix milliseconds: "sessfix-shrunk:1796435116357".
const shrinkMarkPrefix = "sessfix-shrunk:"

// shrinkMarkReach is how much of an image's base64 ShrunkAt decodes to
// find the mark: MarkShrunk puts it within the first 90 bytes of a JPEG
// (a comment right after the start) and of a PNG (a tEXt chunk right
// after the header chunk).
const shrinkMarkReach = 160

// MarkShrunk returns an encoded JPEG or PNG image (format "jpeg" or "png")
// with a mark saying sessfix re-encoded it at ms: a comment segment
// after a JPEG's start of image, a tEXt chunk (keyword "sessfix") after a
// PNG's IHDR chunk. Decoders skip both, so what the image shows does not
// change. It is how a later check tells an image sessfix shrank after a
// failed attempt from one the attempt sent (ShrunkAt). Data of another
// shape is returned as it is.
func MarkShrunk(img []byte, format string, ms int64) []byte {
	text := []byte(shrinkMarkPrefix + strconv.FormatInt(ms, 10))
	switch {
	case format == "jpeg" && len(img) >= 2 && img[0] == 0xFF && img[1] == 0xD8:
		seg := make([]byte, 0, 4+len(text))
		seg = append(seg, 0xFF, 0xFE)
		seg = binary.BigEndian.AppendUint16(seg, uint16(2+len(text)))
		seg = append(seg, text...)
		return splice(img, 2, seg)
	case format == "png" && len(img) >= 33 && bytes.HasPrefix(img, []byte("\x89PNG\r\n\x1a\n")) && string(img[12:16]) == "IHDR":
		data := append([]byte("sessfix\x00"), text...)
		chunk := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
		chunk = append(chunk, "tEXt"...)
		chunk = append(chunk, data...)
		chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(chunk[4:]))
		return splice(img, 33, chunk)
	}
	return img
}

// splice returns b with ins inserted at i, in a new slice.
func splice(b []byte, i int, ins []byte) []byte {
	out := make([]byte, 0, len(b)+len(ins))
	out = append(out, b[:i]...)
	out = append(out, ins...)
	return append(out, b[i:]...)
}

// ShrunkAt returns when sessfix re-encoded an image to repair a request
// refused for its size (the mark MarkShrunk writes), in Unix milliseconds,
// from the image's base64 (a data: URL's payload); 0 when it carries no
// such mark. It decodes only the first bytes of the data.
func ShrunkAt(b64 string) int64 {
	n := min(len(b64), shrinkMarkReach)
	n -= n % 4
	head, err := base64.StdEncoding.DecodeString(b64[:n])
	if err != nil {
		return 0
	}
	i := bytes.Index(head, []byte(shrinkMarkPrefix))
	if i < 0 {
		return 0
	}
	digits := head[i+len(shrinkMarkPrefix):]
	end := bytes.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(digits)
	}
	ms, err := strconv.ParseInt(string(digits[:end]), 10, 64)
	if err != nil {
		return 0
	}
	return ms
}

// Unshrunk reports whether a file is an image sessfix has not shrunk for
// a refused request before (no MarkShrunk mark): SF180 shrinks such an
// image and replaces any other file.
func Unshrunk(f File) bool {
	return strings.HasPrefix(f.Mime, "image/") && ShrunkAt(f.Data) == 0
}

// ShrunkAfter reports whether a part holds an image sessfix re-encoded
// (MarkShrunk) after ms: a user's file part, or a tool result's image
// attachments.
func ShrunkAfter(p *store.Part, ms int64) bool {
	shrunk := func(url, mime string) bool {
		if !strings.HasPrefix(mime, "image/") {
			return false
		}
		data, ok := Base64Data(url)
		return ok && ShrunkAt(data) > ms
	}
	switch p.Type {
	case "file":
		return shrunk(p.Get("url").String(), p.Get("mime").String())
	case "tool":
		for _, a := range p.Get("state.attachments").Array() {
			if shrunk(a.Get("url").String(), a.Get("mime").String()) {
				return true
			}
		}
	}
	return false
}
