package store

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"
)

// OpenCode ids: "<prefix>_" + 12 lowercase hex digits + 14 base62 characters.
// The hex digits are the low 48 bits of ms*4096+counter, so msg and prt ids
// ascend with time; ses ids store the bitwise inverse (they descend).
const (
	idHexLen  = 12
	idRandLen = 14
	idBodyLen = idHexLen + idRandLen
	base62    = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// Prefixes OpenCode uses for the record kinds sessfix touches.
const (
	PrefixSession = "ses"
	PrefixMessage = "msg"
	PrefixPart    = "prt"
)

// PrefixFor returns the id prefix of a record kind.
func PrefixFor(k Kind) string {
	switch k {
	case KindSession:
		return PrefixSession
	case KindMessage:
		return PrefixMessage
	default:
		return PrefixPart
	}
}

// ValidID reports whether id is in OpenCode's format with the given prefix.
func ValidID(id, prefix string) bool {
	if len(id) != len(prefix)+1+idBodyLen || id[:len(prefix)] != prefix || id[len(prefix)] != '_' {
		return false
	}
	body := id[len(prefix)+1:]
	for i := 0; i < idBodyLen; i++ {
		c := body[i]
		if i < idHexLen {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		} else if !isBase62[c] {
			return false
		}
	}
	return true
}

// isBase62 marks the bytes of base62.
var isBase62 = func() (t [256]bool) {
	for i := 0; i < len(base62); i++ {
		t[base62[i]] = true
	}
	return t
}()

// IDTime recovers the creation time of an ascending id (msg, prt) given a
// reference time near it, accounting for the 48-bit wrap (every 2^36 ms).
func IDTime(id string, ref time.Time) (time.Time, bool) {
	i := strings.IndexByte(id, '_')
	if i < 0 || !ValidID(id, id[:i]) {
		return time.Time{}, false
	}
	var v uint64
	fmt.Sscanf(id[i+1:i+1+idHexLen], "%x", &v)
	low := v / 4096 // low 36 bits of ms
	const period = int64(1) << 36
	refMS := ref.UnixMilli()
	ms := refMS - ((refMS-int64(low))%period+period)%period
	if refMS-ms > period/2 {
		ms += period
	}
	return time.UnixMilli(ms), true
}

// NewSessionID returns a new session id for a session created at now, as
// OpenCode mints them: the low 48 bits of the bitwise inverse of
// ms*4096+1, so newer sessions sort first, and random low digits.
func NewSessionID(now time.Time) string { return NewIDSeq(now).Descending(PrefixSession) }

// SessionIDTime recovers the creation time of a session id (descending)
// given a reference time near it, as IDTime does for ascending ids.
func SessionIDTime(id string, ref time.Time) (time.Time, bool) {
	if !ValidID(id, PrefixSession) {
		return time.Time{}, false
	}
	var v uint64
	fmt.Sscanf(id[len(PrefixSession)+1:len(PrefixSession)+1+idHexLen], "%x", &v)
	inv := fmt.Sprintf("msg_%012x", ^v&(1<<48-1)) + id[len(PrefixSession)+1+idHexLen:]
	return IDTime(inv, ref)
}

// ErrNoRoom means no id exists strictly between two neighbours.
var ErrNoRoom = errors.New("no id fits between the neighbours")

var (
	idRadix []int64
	idSpace *big.Int
)

func init() {
	idSpace = big.NewInt(1)
	for i := 0; i < idBodyLen; i++ {
		r := int64(62)
		if i < idHexLen {
			r = 16
		}
		idRadix = append(idRadix, r)
		idSpace.Mul(idSpace, big.NewInt(r))
	}
}

const hexDigits = "0123456789abcdef"

func bodyToInt(body string) (*big.Int, bool) {
	if len(body) != idBodyLen {
		return nil, false
	}
	n := new(big.Int)
	for i := 0; i < idBodyLen; i++ {
		var d int
		if i < idHexLen {
			d = strings.IndexByte(hexDigits, body[i])
		} else {
			d = strings.IndexByte(base62, body[i])
		}
		if d < 0 {
			return nil, false
		}
		n.Mul(n, big.NewInt(idRadix[i]))
		n.Add(n, big.NewInt(int64(d)))
	}
	return n, true
}

func intToBody(n *big.Int) string {
	b := make([]byte, idBodyLen)
	v := new(big.Int).Set(n)
	m := new(big.Int)
	for i := idBodyLen - 1; i >= 0; i-- {
		v.DivMod(v, big.NewInt(idRadix[i]), m)
		if i < idHexLen {
			b[i] = hexDigits[m.Int64()]
		} else {
			b[i] = base62[m.Int64()]
		}
	}
	return string(b)
}

// MintBetween returns a new id with the prefix that sorts strictly after lo
// and strictly before hi (byte order, the order OpenCode uses). Either bound
// may be empty: then the id is placed just inside the other bound (or at
// now when both are empty). Bounds with a different prefix or format are
// compared by byte order and must still leave room. The result is in
// OpenCode's exact format, with random low digits.
func MintBetween(prefix, lo, hi string, now time.Time) (string, error) {
	p := prefix + "_"
	loN, hiN := big.NewInt(-1), new(big.Int).Set(idSpace)
	if lo != "" {
		if b, ok := strings.CutPrefix(lo, p); ok {
			if n, ok := bodyToInt(b); ok {
				loN = n
			}
		} else if lo > p {
			return "", fmt.Errorf("lower neighbour %q sorts after every %s id: %w", lo, prefix, ErrNoRoom)
		}
	}
	if hi != "" {
		if b, ok := strings.CutPrefix(hi, p); ok {
			if n, ok := bodyToInt(b); ok {
				hiN = n
			}
		} else if hi < p {
			return "", fmt.Errorf("upper neighbour %q sorts before every %s id: %w", hi, prefix, ErrNoRoom)
		}
	}
	if lo == "" && hi == "" {
		v := uint64(now.UnixMilli())*4096 + 1
		v &= 1<<48 - 1
		return p + fmt.Sprintf("%012x", v) + randBase62(idRandLen), nil
	}
	gap := new(big.Int).Sub(hiN, loN)
	if gap.Cmp(big.NewInt(1)) <= 0 {
		return "", fmt.Errorf("between %q and %q: %w", lo, hi, ErrNoRoom)
	}
	// Place the id close to the bound we have (keeping its time prefix where
	// possible) but with random room on both sides.
	var target *big.Int
	step := new(big.Int).Lsh(big.NewInt(1), 64) // about a millisecond of random digits
	switch {
	case lo == "" || loN.Sign() < 0:
		target = new(big.Int).Sub(hiN, minBig(step, new(big.Int).Rsh(gap, 1)))
	case hi == "" || hiN.Cmp(idSpace) >= 0:
		target = new(big.Int).Add(loN, minBig(step, new(big.Int).Rsh(gap, 1)))
	default:
		target = new(big.Int).Add(loN, new(big.Int).Rsh(gap, 1))
	}
	if target.Cmp(loN) <= 0 {
		target = new(big.Int).Add(loN, big.NewInt(1))
	}
	if target.Sign() < 0 {
		target.SetInt64(0)
	}
	id := p + intToBody(target)
	if (lo != "" && id <= lo) || (hi != "" && id >= hi) {
		return "", fmt.Errorf("between %q and %q: %w", lo, hi, ErrNoRoom)
	}
	return id, nil
}

func minBig(a, b *big.Int) *big.Int {
	if a.Cmp(b) < 0 {
		return a
	}
	return b
}

func randBase62(n int) string {
	b := make([]byte, n)
	r := make([]byte, n)
	_, _ = rand.Read(r)
	for i := range b {
		b[i] = base62[int(r[i])%62]
	}
	return string(b)
}

// IDSeq mints new ids the way one OpenCode process does: every id, whatever
// its prefix, takes the next value of one counter within the millisecond,
// so ids minted in order sort in that order (ascending ids: msg, prt) or in
// the reverse order (descending ids: ses, whose time digits are the bitwise
// inverse). The low digits are random, as OpenCode's are. Its zero value
// is not usable: start one with NewIDSeq.
type IDSeq struct {
	next uint64 // ms*4096 + counter of the next id
}

// NewIDSeq returns a sequence whose first id is OpenCode's first id of the
// millisecond now.
func NewIDSeq(now time.Time) *IDSeq {
	return &IDSeq{next: uint64(now.UnixMilli())*4096 + 1}
}

// Ascending returns the next id with the prefix, sorting after every id
// the sequence minted before (msg and prt ids).
func (q *IDSeq) Ascending(prefix string) string { return q.mint(prefix, false) }

// Descending returns the next id with the prefix in OpenCode's descending
// format (ses ids): newer sessions sort first.
func (q *IDSeq) Descending(prefix string) string { return q.mint(prefix, true) }

func (q *IDSeq) mint(prefix string, descending bool) string {
	v := q.next
	q.next++
	if descending {
		v = ^v
	}
	return prefix + "_" + fmt.Sprintf("%012x", v&(1<<48-1)) + randBase62(idRandLen)
}
