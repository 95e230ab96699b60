package cmd

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsLinks checks the relative links of the user documentation: the
// file exists and, for links into a markdown file, the #anchor is one of
// its headings.
func TestDocsLinks(t *testing.T) {
	docs := []string{"guide.md", "ci.md", "sarif.md", "storage-shapes.md", "exit-codes.md", "json-output.md", "surgery.md"}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, name := range docs {
		path := filepath.Join("..", "docs", name)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range link.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			n++
			file, anchor, _ := strings.Cut(target, "#")
			if file == "" {
				file = name
			}
			full := filepath.Join("..", "docs", file)
			body, err := os.ReadFile(full)
			if err != nil {
				t.Errorf("%s: link %s: %v", name, target, err)
				continue
			}
			if anchor != "" && !hasAnchor(string(body), anchor) {
				t.Errorf("%s: link %s: no heading with that anchor in %s", name, target, file)
			}
		}
		if n == 0 && name != "exit-codes.md" {
			t.Errorf("%s: no relative links found; is the pattern broken?", name)
		}
	}
}

func hasAnchor(markdown, anchor string) bool {
	for _, l := range strings.Split(markdown, "\n") {
		if h, ok := strings.CutPrefix(strings.TrimLeft(l, "#"), " "); ok && strings.HasPrefix(l, "#") {
			if githubAnchor(h) == anchor {
				return true
			}
		}
	}
	return false
}

// githubAnchor is the anchor GitHub gives a heading: lowercase, spaces to
// hyphens, other punctuation than - and _ dropped.
func githubAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}
