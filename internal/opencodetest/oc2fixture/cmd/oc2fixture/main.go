// Command oc2fixture writes the OpenCode 2 database fixtures into
// testdata/opencode2/<name>/opencode.db, with the warnings the simulated
// import logged into testdata/opencode2/<name>/import-warnings.json. Run it
// from the repository root, or through go generate ./internal/opencodetest/oc2fixture/.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sessfix/sessfix/internal/opencodetest/oc2fixture"
)

func main() {
	out := flag.String("out", "testdata/opencode2", "directory to write the fixtures into")
	base := flag.String("base", "testdata/real/opencode-1.18.33/opencode.db", "the OpenCode 1.18.33 database to start from")
	flag.Parse()
	if err := run(*out, *base); err != nil {
		fmt.Fprintln(os.Stderr, "oc2fixture:", err)
		os.Exit(1)
	}
}

func run(out, base string) error {
	for _, name := range oc2fixture.Names {
		dir := filepath.Join(out, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		db := filepath.Join(dir, "opencode.db")
		tmp := db + ".tmp"
		os.Remove(tmp)
		warnings, err := oc2fixture.Build(name, base, tmp)
		if err != nil {
			os.Remove(tmp)
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := os.Rename(tmp, db); err != nil {
			return err
		}
		w := filepath.Join(dir, "import-warnings.json")
		if name == oc2fixture.Native {
			os.Remove(w)
			continue
		}
		if warnings == nil {
			warnings = []oc2fixture.Warning{}
		}
		b, err := json.MarshalIndent(warnings, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(w, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}
