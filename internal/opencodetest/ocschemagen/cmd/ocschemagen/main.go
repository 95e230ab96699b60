// Command ocschemagen writes pkg/ocschema/schema_gen.go, the table of
// OpenCode's record schema, from @opencode-ai/sdk (fetched with npm pack)
// and the OpenAPI capture in pkg/ocschema/testdata. With -capture it first
// refreshes that capture from a real `opencode serve` (GET /doc), which
// installs opencode-ai into .cache/ when needed.
//
//	go generate ./pkg/ocschema/                                   # regenerate the table
//	go run ./internal/opencodetest/ocschemagen/cmd/ocschemagen -capture -dir pkg/ocschema   # re-capture, then regenerate
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/ocschemagen"
)

func main() {
	dir := flag.String("dir", ".", "the pkg/ocschema directory")
	capture := flag.Bool("capture", false, "re-capture the OpenAPI document from real OpenCode first")
	flag.Parse()
	if err := run(*dir, *capture); err != nil {
		fmt.Fprintln(os.Stderr, "ocschemagen:", err)
		os.Exit(1)
	}
}

func run(dir string, capture bool) error {
	capPath := filepath.Join(dir, "testdata", ocschemagen.OpenAPIFile)
	if capture {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		oa, err := ocschemagen.CaptureOpenAPI(ctx)
		if err != nil {
			return err
		}
		b, err := oa.Marshal()
		if err != nil {
			return err
		}
		if err := os.WriteFile(capPath, b, 0o644); err != nil {
			return err
		}
	}
	oa, err := os.ReadFile(capPath)
	if err != nil {
		return err
	}
	src, err := ocschemagen.Generate(oa)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "schema_gen.go"), src, 0o644)
}
