// Package ocschemagen builds pkg/ocschema's table of OpenCode's record
// schema from two machine-readable sources: the published SDK
// (`@opencode-ai/sdk` on the npm registry, its TypeScript types) and the
// OpenAPI document the matching `opencode serve` publishes at GET /doc
// (captured once into pkg/ocschema/testdata). See cmd/ocschemagen.
package ocschemagen

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
)

// The SDK release the table follows, and the integrity npm publishes for
// its tarball (`npm view @opencode-ai/sdk@1.18.33 dist.integrity`).
const (
	SDKVersion   = "1.18.33"
	SDKIntegrity = "sha512-Nyurky9+AA2tvZ6my8UtO5pxPoXxrNypqjeEqMshBGiR542glOy+KE1Y+3lwWU+Z6HC/hSmrdXNbX81+qiuTzg=="
)

// SDKTypesPath is the file inside the tarball with the current API's types
// (the "v2" client of OpenCode 1.x; not OpenCode 2).
const SDKTypesPath = "package/dist/v2/gen/types.gen.d.ts"

// FetchSDKTypes returns types.gen.d.ts of @opencode-ai/sdk@SDKVersion. The
// tarball is fetched once with `npm pack` into <repo>/.cache/ocschema/
// (git-ignored, shared by worktrees) and checked against SDKIntegrity
// every time it is read.
func FetchSDKTypes() ([]byte, error) {
	root, err := opencodetest.RepoRoot()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, ".cache", "ocschema")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tgz := filepath.Join(dir, "opencode-ai-sdk-"+SDKVersion+".tgz")
	b, err := os.ReadFile(tgz)
	if err != nil || integrity(b) != SDKIntegrity {
		if b, err = packSDK(dir); err != nil {
			return nil, err
		}
		if got := integrity(b); got != SDKIntegrity {
			return nil, fmt.Errorf("@opencode-ai/sdk@%s from npm has integrity %s, want %s", SDKVersion, got, SDKIntegrity)
		}
		tmp := tgz + ".tmp"
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			return nil, err
		}
		if err := os.Rename(tmp, tgz); err != nil {
			return nil, err
		}
	}
	return extract(b, SDKTypesPath)
}

func integrity(b []byte) string {
	sum := sha512.Sum512(b)
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

// packSDK runs `npm pack` in a temporary directory under dir and returns
// the tarball.
func packSDK(dir string) ([]byte, error) {
	tmp, err := os.MkdirTemp(dir, ".pack-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "pack", "--silent", "--pack-destination", tmp, "@opencode-ai/sdk@"+SDKVersion)
	cmd.Dir = tmp
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("npm pack @opencode-ai/sdk@%s: %v\n%s", SDKVersion, err, out.String())
	}
	matches, _ := filepath.Glob(filepath.Join(tmp, "*.tgz"))
	if len(matches) != 1 {
		return nil, fmt.Errorf("npm pack @opencode-ai/sdk@%s left %d tarballs\n%s", SDKVersion, len(matches), out.String())
	}
	return os.ReadFile(matches[0])
}

func extract(tgz []byte, name string) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s not in the SDK tarball", name)
		}
		if err != nil {
			return nil, err
		}
		if strings.TrimPrefix(h.Name, "./") == name {
			return io.ReadAll(tr)
		}
	}
}
