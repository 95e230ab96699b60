package report

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clean makes text read from a store safe to print on a terminal: ids, file
// names, titles, stored error texts and record bytes may hold control
// characters (an escape sequence can recolour, retitle or clear the
// terminal), bidirectional overrides or invalid UTF-8. Every rune that is
// not graphic, apart from tab, is written as a Go escape (\x1b, \u202e);
// an invalid byte as \xNN. Text with none is returned as it is.
func Clean(s string) string {
	if clean(s, false) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t' || unicode.IsGraphic(r):
			b.WriteString(s[i : i+n])
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

// CleanLines is Clean for each line of a text that spans lines on purpose
// (an error with hints, a report's detail).
func CleanLines(s string) string {
	if clean(s, true) {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Clean(l)
	}
	return strings.Join(lines, "\n")
}

// clean reports whether Clean leaves s as it is; with nl, line breaks are
// allowed too.
func clean(s string, nl bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x7f {
			return cleanSlow(s[i:], nl)
		}
		if c < 0x20 && c != '\t' && !(nl && c == '\n') {
			return false
		}
	}
	return true
}

func cleanSlow(s string, nl bool) bool {
	for _, r := range s {
		if r == utf8.RuneError || r != '\t' && !(nl && r == '\n') && !unicode.IsGraphic(r) {
			return false
		}
	}
	return true
}

// ModelName names a model as the session lists and views print it:
// provider/model, the model alone without a provider, "-" when neither is
// known.
func ModelName(provider, model string) string {
	switch {
	case provider == "" && model == "":
		return "-"
	case provider == "":
		return model
	}
	return provider + "/" + model
}
