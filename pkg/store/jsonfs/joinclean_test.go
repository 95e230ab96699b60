package jsonfs

import (
	"path/filepath"
	"testing"
)

func TestJoinCleanIsFilepathJoin(t *testing.T) {
	for _, dir := range []string{"", ".", "/", "a", "a/b", "/a/b", "a/", "./a", "a//b", "../a", "a/.."} {
		for _, name := range []string{"x.json", "prt_1.json", ".hidden", "..", "."} {
			if got, want := joinClean(dir, name), filepath.Join(dir, name); got != want {
				t.Errorf("joinClean(%q, %q) = %q, want %q", dir, name, got, want)
			}
		}
	}
}
