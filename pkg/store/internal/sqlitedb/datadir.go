package sqlitedb

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// InDataDir returns the databases of an OpenCode data dir: $OPENCODE_DB
// when db is set (absolute, or relative to the data dir), else opencode.db
// and the channels' opencode-*.db; and every place it looked.
func InDataDir(dir, db string) (found, looked []string) {
	if db != "" {
		if !filepath.IsAbs(db) {
			db = filepath.Join(dir, db)
		}
		if IsFile(db) {
			found = []string{db}
		}
		return found, []string{db + " (from $OPENCODE_DB)"}
	}
	main := filepath.Join(dir, "opencode.db")
	if IsFile(main) {
		found = append(found, main)
	}
	more, _ := filepath.Glob(filepath.Join(globEscape(dir), "opencode-*.db"))
	sort.Strings(more)
	for _, m := range more {
		if IsFile(m) {
			found = append(found, m)
		}
	}
	return found, []string{main, filepath.Join(dir, "opencode-*.db")}
}

// IsFile reports whether p is a regular file.
func IsFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// globEscape escapes glob metacharacters in a literal path.
func globEscape(p string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	if filepath.Separator == '\\' {
		r = strings.NewReplacer(`*`, `[*]`, `?`, `[?]`, `[`, `[[]`)
	}
	return r.Replace(p)
}
