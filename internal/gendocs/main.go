// Command gendocs writes docs/rules.md from the rule registry in pkg/scan.
// Run it from the repository root after changing a rule:
//
//	go run ./internal/gendocs
//
// A test in pkg/scan fails while docs/rules.md is stale.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sessfix/sessfix/pkg/scan"
)

func main() {
	out := flag.String("o", scan.RulesDocPath, "file to write")
	flag.Parse()
	var b bytes.Buffer
	if err := scan.WriteRulesMarkdown(&b); err != nil {
		fmt.Fprintf(os.Stderr, "gendocs: %v\n", err)
		os.Exit(1)
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "gendocs: create the directory of %s: %v\n", *out, err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "gendocs: write %s: %v (run from the repository root)\n", *out, err)
		os.Exit(1)
	}
}
