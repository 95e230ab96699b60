package fix

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"regexp"

	"github.com/sessfix/sessfix/pkg/store"
)

// base64Shown is the longest base64 payload of a data: URL a diff prints;
// a longer one (a pasted image: megabytes) is summarised.
const base64Shown = 4 << 10

// longBase64 matches a data: URL's type and base64 of 1000 bytes or more
// (regexp's longest repeat); summarise leaves those up to base64Shown.
var longBase64 = regexp.MustCompile(`(data:[A-Za-z0-9.+/-]+;base64,)([A-Za-z0-9+/=]{1000,})`)

// summaryNote is the "# " line before a diff whose base64 is summarised.
const summaryNote = "# base64 data over 4 KiB is shown as its length and sha256, not printed: this diff is for reading, patch cannot apply it\n"

// hasLongBase64 reports whether an edit of the change set holds a data:
// URL whose base64 a diff would summarise.
func hasLongBase64(cs *store.ChangeSet) bool {
	for _, e := range cs.Edits {
		for _, b := range [][]byte{e.Before, e.After} {
			if len(b) <= base64Shown || !bytes.Contains(b, []byte(";base64,")) {
				continue
			}
			for _, m := range longBase64.FindAllSubmatchIndex(b, -1) {
				if m[5]-m[4] > base64Shown {
					return true
				}
			}
		}
	}
	return false
}

// base64Summary writes what it is given with each base64 payload over
// base64Shown bytes replaced by "[… N bytes of base64, sha256 …]". Each
// write holds whole diffs, so no payload is cut between two writes.
type base64Summary struct{ w io.Writer }

func (s base64Summary) Write(p []byte) (int, error) {
	if len(p) <= base64Shown || !bytes.Contains(p, []byte(";base64,")) {
		return s.w.Write(p)
	}
	out := longBase64.ReplaceAllFunc(p, func(m []byte) []byte {
		sub := longBase64.FindSubmatch(m)
		if len(sub[2]) <= base64Shown {
			return m
		}
		sum := sha256.Sum256(sub[2])
		return fmt.Appendf(sub[1][:len(sub[1]):len(sub[1])], "[… %d bytes of base64, sha256 %s…]", len(sub[2]), hex.EncodeToString(sum[:6]))
	})
	if _, err := s.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
