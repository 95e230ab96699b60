package mockstream

import (
	"bytes"
	"encoding/base64"
)

// LooksLikeImage reports whether base64 data starts like a PNG, JPEG, GIF
// or WebP image, the four types the providers' vision inputs name; data
// that is not base64 does not. The OpenAI and Gemini mocks refuse an image
// that does not (mockanthropic decodes the header instead).
func LooksLikeImage(data string) bool {
	head := data[:min(len(data), 16)]
	raw, err := base64.StdEncoding.DecodeString(head[:len(head)/4*4])
	if err != nil {
		return false
	}
	switch {
	case bytes.HasPrefix(raw, []byte("\x89PNG\r\n\x1a\n")), bytes.HasPrefix(raw, []byte{0xff, 0xd8, 0xff}),
		bytes.HasPrefix(raw, []byte("GIF87a")), bytes.HasPrefix(raw, []byte("GIF89a")):
		return true
	case len(raw) >= 12 && string(raw[:4]) == "RIFF" && string(raw[8:12]) == "WEBP":
		return true
	}
	return false
}
