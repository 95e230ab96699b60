package jsonfs

import (
	"path/filepath"
	"testing"
)

func TestJoinerIsFilepathJoin(t *testing.T) {
	for _, dir := range []string{"", ".", "/", "a", "a/b", "/a/b", "a/", "./a", "a//b", "../a", "a/.."} {
		j := newJoiner(dir)
		for _, name := range []string{"x.json", "prt_1.json", ".hidden", "..", "."} {
			if got, want := j.join(name), filepath.Join(dir, name); got != want {
				t.Errorf("newJoiner(%q).join(%q) = %q, want %q", dir, name, got, want)
			}
		}
	}
}
