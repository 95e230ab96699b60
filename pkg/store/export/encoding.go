package export

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// encoding is how an export file's text is stored. `opencode export`
// writes UTF-8 without a byte order mark; Windows PowerShell 5's
// `opencode export > x.json` saves UTF-16LE with a BOM, and editors on
// Windows may add a UTF-8 BOM. sessfix reads all of them, and writes a file
// back in its own encoding, BOM included, so the bytes outside the edited
// objects stay the file's own.
type encoding struct {
	name  string // "UTF-8", "UTF-8 with a byte order mark", "UTF-16LE with a byte order mark", ...
	bom   []byte // the byte order mark the file starts with, if any
	utf16 bool
	be    bool // big-endian UTF-16
}

var (
	utf8BOM    = []byte{0xef, 0xbb, 0xbf}
	utf16LEBOM = []byte{0xff, 0xfe}
	utf16BEBOM = []byte{0xfe, 0xff}
)

// plain reports whether the file is UTF-8 without a BOM, as OpenCode
// writes it: its text is its bytes.
func (e encoding) plain() bool { return !e.utf16 && e.bom == nil }

// sniff tells the encoding of an export file from its first bytes: a byte
// order mark, or, for UTF-16 without one, the zero half of the first
// character (JSON text starts with ASCII: `{` or whitespace).
func sniff(raw []byte) encoding {
	switch {
	case bytes.HasPrefix(raw, utf8BOM):
		return encoding{name: "UTF-8 with a byte order mark", bom: utf8BOM}
	case bytes.HasPrefix(raw, utf16LEBOM):
		return encoding{name: "UTF-16LE with a byte order mark", bom: utf16LEBOM, utf16: true}
	case bytes.HasPrefix(raw, utf16BEBOM):
		return encoding{name: "UTF-16BE with a byte order mark", bom: utf16BEBOM, utf16: true, be: true}
	case len(raw) >= 2 && raw[0] != 0 && raw[1] == 0:
		return encoding{name: "UTF-16LE", utf16: true}
	case len(raw) >= 2 && raw[0] == 0 && raw[1] != 0:
		return encoding{name: "UTF-16BE", utf16: true, be: true}
	}
	return encoding{name: "UTF-8"}
}

// decode returns an export file's text as UTF-8, and its encoding. A UTF-8
// BOM becomes three spaces, so every offset in the text is the offset of
// the same byte in the file; UTF-16 is transcoded. Plain UTF-8 is returned
// as is (no copy).
func decode(raw []byte) ([]byte, encoding, error) {
	enc := sniff(raw)
	switch {
	case enc.plain():
		return raw, enc, nil
	case !enc.utf16:
		text := bytes.Clone(raw)
		copy(text, "   ")
		return text, enc, nil
	}
	body := raw[len(enc.bom):]
	if len(body)%2 != 0 {
		return nil, enc, fmt.Errorf("%s text with an odd number of bytes (truncated)", enc.name)
	}
	units := make([]uint16, len(body)/2)
	for i := range units {
		if enc.be {
			units[i] = binary.BigEndian.Uint16(body[2*i:])
		} else {
			units[i] = binary.LittleEndian.Uint16(body[2*i:])
		}
	}
	text := make([]byte, 0, len(units)+len(units)/8)
	for _, r := range utf16.Decode(units) {
		text = utf8.AppendRune(text, r)
	}
	return text, enc, nil
}

// encode is the file holding text in encoding e: decode's inverse. Text
// a UTF-16 file cannot hold exactly (bytes that are not UTF-8) is an
// error, never a file that would read back otherwise.
func (e encoding) encode(text []byte) ([]byte, error) {
	switch {
	case e.plain():
		return text, nil
	case !e.utf16:
		if !bytes.HasPrefix(text, []byte("   ")) {
			return nil, fmt.Errorf("the byte order mark's place was edited")
		}
		out := bytes.Clone(text)
		copy(out, e.bom)
		return out, nil
	}
	if !utf8.Valid(text) {
		// Each invalid byte would become U+FFFD: the file would not read
		// back as the text sessfix meant to write.
		return nil, fmt.Errorf("the text is not valid UTF-8, which %s cannot hold", e.name)
	}
	units := utf16.Encode([]rune(string(text)))
	out := make([]byte, len(e.bom), len(e.bom)+2*len(units))
	copy(out, e.bom)
	for _, u := range units {
		if e.be {
			out = binary.BigEndian.AppendUint16(out, u)
		} else {
			out = binary.LittleEndian.AppendUint16(out, u)
		}
	}
	return out, nil
}

// checkRoundTrip makes sure the file raw, decoded as text, encodes back to
// the same bytes: a UTF-16 file with an unpaired surrogate, or a UTF-8 one
// with invalid bytes, would not, and sessfix then refuses to write it
// rather than change bytes no edit touched.
func (e encoding) checkRoundTrip(path string, raw, text []byte) error {
	if e.plain() {
		return nil
	}
	back, err := e.encode(text)
	if err == nil && !bytes.Equal(back, raw) {
		err = fmt.Errorf("its text is not valid %s", e.name)
	}
	if err != nil {
		return fmt.Errorf("cannot rewrite %s in its own encoding (%s): %w; convert it to UTF-8 first (iconv -f %s -t UTF-8 %s > %s.utf8.json): nothing was written",
			path, e.name, err, e.iconvName(), path, trimJSON(path))
	}
	return nil
}

// iconvName is the encoding as iconv names it.
func (e encoding) iconvName() string {
	switch {
	case !e.utf16:
		return "UTF-8"
	case e.bom != nil:
		return "UTF-16"
	case e.be:
		return "UTF-16BE"
	}
	return "UTF-16LE"
}

func trimJSON(path string) string {
	if n := len(path) - len(".json"); n > 0 && path[n:] == ".json" {
		return path[:n]
	}
	return path
}
