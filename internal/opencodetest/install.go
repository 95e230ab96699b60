package opencodetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
)

// Pinned OpenCode versions the harness supports (ocrelease names them).
const (
	// V1_18 stores sessions in SQLite (<data>/opencode.db).
	V1_18 = ocrelease.V1_18
	// V1_1 stores sessions as JSON files (<data>/storage/…).
	V1_1 = ocrelease.V1_1
	// VDev is a dev channel build (its database is opencode-dev.db).
	VDev = ocrelease.VDev
)

// InstallTimeout bounds one npm install.
var InstallTimeout = 5 * time.Minute

// RepoRoot returns the directory holding the module's go.mod, found by
// walking up from the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// CacheDir returns <repo root>/.cache/opencode, creating it.
func CacheDir() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, ".cache", "opencode")
	return dir, os.MkdirAll(dir, 0o755)
}

// Install makes sure opencode-ai@version is installed under
// <repo root>/.cache/opencode/<version>/ and returns the path of the native
// binary inside it (not the npm wrapper script: a signal sent to the
// returned path reaches OpenCode itself).
//
// An existing complete install is reused. A new one is made in a temporary
// sibling directory and renamed into place, so two processes installing at
// once never see a half-made tree; the loser of the race discards its copy.
func Install(version string) (string, error) {
	installMu.Lock()
	defer installMu.Unlock()
	if bin, ok := installed[version]; ok {
		return bin, nil
	}
	bin, err := install(version)
	if err == nil {
		installed[version] = bin
	}
	return bin, err
}

var (
	installMu sync.Mutex
	installed = map[string]string{}
)

func install(version string) (string, error) {
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	final := filepath.Join(cache, version)
	if bin, err := binaryIn(final, version); err == nil {
		return bin, nil
	}
	tmp := filepath.Join(cache, fmt.Sprintf(".tmp-%s-%d-%s", version, os.Getpid(), randHex(4)))
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), InstallTimeout)
	defer cancel()
	var out bytes.Buffer
	if err := npmInstall(ctx, tmp, version, &out); err != nil {
		return "", err
	}
	if _, err := binaryIn(tmp, version); err != nil {
		return "", fmt.Errorf("after npm install: %w\n%s", err, out.String())
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), []byte(version+"\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		// Someone else finished first (or an old, incomplete tree is in
		// the way: move it aside and retry once).
		if bin, err2 := binaryIn(final, version); err2 == nil {
			return bin, nil
		}
		stale := final + ".stale-" + randHex(4)
		if err3 := os.Rename(final, stale); err3 == nil {
			defer os.RemoveAll(stale)
			if err4 := os.Rename(tmp, final); err4 != nil {
				return "", err4
			}
		} else {
			return "", err
		}
	}
	return binaryIn(final, version)
}

// npmInstall installs opencode-ai@version into prefix; a channel build,
// which npm serves only as the platform packages, is installed as the first
// of them the registry has for this machine.
func npmInstall(ctx context.Context, prefix, version string, out *bytes.Buffer) error {
	pkgs := []string{"opencode-ai"}
	if ocrelease.IsChannel(version) {
		pkgs = platformPackages()
	}
	var errs []error
	for _, pkg := range pkgs {
		cmd := exec.CommandContext(ctx, "npm", "install", "--prefix", prefix, "--no-audit", "--no-fund",
			"--loglevel=error", pkg+"@"+version)
		cmd.Stdout, cmd.Stderr = out, out
		err := cmd.Run()
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("npm install %s@%s: %v\n%s", pkg, version, err, out.String()))
		out.Reset()
	}
	return errors.Join(errs...)
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// platformPackages lists the npm packages that may carry the native binary,
// best first, the way opencode-ai's own launcher picks them.
func platformPackages() []string {
	osName := map[string]string{"darwin": "darwin", "linux": "linux", "windows": "windows"}[runtime.GOOS]
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	base := "opencode-" + osName + "-" + arch
	if arch != "x64" {
		return []string{base, base + "-musl"}
	}
	avx2 := true
	if runtime.GOOS == "linux" {
		b, err := os.ReadFile("/proc/cpuinfo")
		avx2 = err == nil && bytes.Contains(b, []byte(" avx2"))
	}
	musl := false
	if _, err := os.Stat("/etc/alpine-release"); err == nil {
		musl = true
	}
	names := []string{base, base + "-baseline", base + "-musl", base + "-baseline-musl"}
	switch {
	case musl && avx2:
		names = []string{base + "-musl", base + "-baseline-musl", base, base + "-baseline"}
	case musl:
		names = []string{base + "-baseline-musl", base + "-musl", base + "-baseline", base}
	case !avx2:
		names = []string{base + "-baseline", base, base + "-baseline-musl", base + "-musl"}
	}
	return names
}

// binaryIn finds the native binary in an install prefix and checks that it
// reports the wanted version.
func binaryIn(prefix, version string) (string, error) {
	if _, err := os.Stat(filepath.Join(prefix, "node_modules", "opencode-ai", "package.json")); err != nil && !ocrelease.IsChannel(version) {
		return "", fmt.Errorf("opencode-ai@%s not installed in %s", version, prefix)
	}
	exe := "opencode"
	if runtime.GOOS == "windows" {
		exe = "opencode.exe"
	}
	for _, name := range platformPackages() {
		bin := filepath.Join(prefix, "node_modules", name, "bin", exe)
		if _, err := os.Stat(bin); err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		home, err := os.MkdirTemp("", "opencode-version-")
		if err != nil {
			cancel()
			return "", err
		}
		cmd := exec.CommandContext(ctx, bin, "--version")
		cmd.Env = append(os.Environ(), "HOME="+home, "TMPDIR="+home, "XDG_DATA_HOME="+home, "XDG_CONFIG_HOME="+home,
			"XDG_CACHE_HOME="+home, "XDG_STATE_HOME="+home,
			"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1")
		cmd.Dir = home
		out, err := cmd.Output()
		cancel()
		os.RemoveAll(home)
		if err != nil {
			continue
		}
		if got := strings.TrimSpace(string(out)); got != version {
			return "", fmt.Errorf("%s reports version %q, want %q", bin, got, version)
		}
		return bin, nil
	}
	return "", fmt.Errorf("no runnable opencode binary for %s/%s in %s", runtime.GOOS, runtime.GOARCH, prefix)
}
