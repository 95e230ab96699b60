package ocenv

import (
	"os"
	"path/filepath"
	"strings"
)

// GlobalProject is the project OpenCode files sessions of directories
// outside any git repository under.
const GlobalProject = "global"

// Resolution is the project OpenCode 1.x resolves a directory to.
type Resolution struct {
	// ID is the project id; empty when it cannot be told (Why says why).
	ID  string
	Why string
}

// ResolveProject returns the project OpenCode resolves directory to: the
// closest .git entry above it (the directory itself included) names a
// repository, whose id OpenCode computes from the repository's first
// commit once and caches in .git/opencode (the common git directory for a
// worktree); no .git entry means the project "global". Only the cache is
// read, never git: a repository OpenCode has not run in, and a directory
// that does not exist on this machine, resolve to no id.
func ResolveProject(directory string) Resolution {
	if directory == "" {
		return Resolution{Why: "the session records no directory"}
	}
	if fi, err := os.Stat(directory); err != nil || !fi.IsDir() {
		return Resolution{Why: "its directory " + directory + " does not exist on this machine"}
	}
	for d := filepath.Clean(directory); ; d = filepath.Dir(d) {
		git := filepath.Join(d, ".git")
		if fi, err := os.Stat(git); err == nil {
			for _, dir := range gitDirs(git, fi.IsDir()) {
				if b, err := os.ReadFile(filepath.Join(dir, "opencode")); err == nil {
					if id := strings.TrimSpace(string(b)); id != "" {
						return Resolution{ID: id}
					}
				}
			}
			return Resolution{Why: "OpenCode has cached no project id in " + git + " (run opencode once in " + d + ")"}
		}
		if filepath.Dir(d) == d {
			return Resolution{ID: GlobalProject}
		}
	}
}

// gitDirs are the directories a .git entry stands for: itself, or for a
// .git file (a worktree or submodule) the git directory it points at and
// that directory's common directory.
func gitDirs(git string, isDir bool) []string {
	if isDir {
		return []string{git}
	}
	b, err := os.ReadFile(git)
	if err != nil {
		return nil
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return nil
	}
	dir := strings.TrimSpace(target)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(git), dir)
	}
	out := []string{dir}
	if c, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(dir, common)
		}
		out = append([]string{common}, out...)
	}
	return out
}
