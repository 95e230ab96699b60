package mockopenai

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// DefaultSecret makes encrypted content when a Server has no Secret.
var DefaultSecret = []byte("mockopenai-default-secret")

const encPrefix = "mockenc1."

// Sealed is what encrypted reasoning content says about itself.
type Sealed struct {
	ID      string `json:"id"`      // the reasoning item's id (rs_…)
	Account string `json:"account"` // digest of the API key it was issued to
	Model   string `json:"model"`
	Nonce   string `json:"nonce"`
}

// AccountDigest is how encrypted content names the API key it was issued
// to (the key itself never appears in it).
func AccountDigest(apiKey string) string {
	h := sha256.Sum256([]byte("account:" + apiKey))
	return hex.EncodeToString(h[:8])
}

// Seal returns the encrypted content the mock issues for reasoning item id,
// bound to the API key and model it was produced for.
func Seal(secret []byte, id, apiKey, model string) string {
	nonce := make([]byte, 8)
	_, _ = rand.Read(nonce)
	p, _ := json.Marshal(Sealed{ID: id, Account: AccountDigest(apiKey), Model: model, Nonce: hex.EncodeToString(nonce)})
	m := hmac.New(sha256.New, secret)
	m.Write(p)
	return encPrefix + base64.RawURLEncoding.EncodeToString(p) + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Unseal reads encrypted content. ok is false when it was not made by
// Seal; valid is true when it was made with secret (whatever account and
// model it names).
func Unseal(secret []byte, content string) (s Sealed, ok, valid bool) {
	rest, found := strings.CutPrefix(content, encPrefix)
	if !found {
		return s, false, false
	}
	payload, mac, found := strings.Cut(rest, ".")
	if !found {
		return s, false, false
	}
	p, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil || json.Unmarshal(p, &s) != nil {
		return Sealed{}, false, false
	}
	sum, err := base64.RawURLEncoding.DecodeString(mac)
	if err != nil {
		return s, true, false
	}
	m := hmac.New(sha256.New, secret)
	m.Write(p)
	return s, true, hmac.Equal(m.Sum(nil), sum)
}

// Verify reports whether content was issued by this secret to apiKey for
// model.
func Verify(secret []byte, content, apiKey, model string) bool {
	s, ok, valid := Unseal(secret, content)
	return ok && valid && s.Account == AccountDigest(apiKey) && s.Model == model
}
