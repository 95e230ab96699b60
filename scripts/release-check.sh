#!/usr/bin/env bash
# Checks that a release would work, without publishing anything:
#   1. goreleaser check                      (.goreleaser.yaml is valid)
#   2. goreleaser build --snapshot --clean   (every target builds, CGO_ENABLED=0)
#   3. the linux/amd64 binary runs `sessfix version`
#   4. with BENCH_BASELINE=COMMIT: scripts/bench-compare.sh COMMIT, the scan
#      benchmarks of HEAD against that commit's, alternated on this machine
#      (fails when HEAD is slower by more than its THRESHOLD; its RATIOS
#      adds the bars against the plain read, see docs/performance.md)
#
# GoReleaser comes from the Go module proxy, pinned to GORELEASER_VERSION. A
# goreleaser of that version already in .cache/bin, the user's tool cache
# (${XDG_CACHE_HOME:-$HOME/.cache}/sessfix-tools), $GOBIN or $(go env
# GOPATH)/bin is reused; otherwise it is built into .cache/bin and copied to
# the tool cache, so a fresh checkout on the same machine does not build it
# again (building it costs minutes of CPU).
#
# Usage: scripts/release-check.sh
#        BENCH_BASELINE=v1.4.0 scripts/release-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."

GORELEASER_VERSION="${GORELEASER_VERSION:-v2.15.0}"
GORELEASER_MODULE="github.com/goreleaser/goreleaser/v2"

say() { printf 'release-check: %s\n' "$*" >&2; }

# version_of prints the module version a Go binary was built from.
version_of() {
  go version -m "$1" 2>/dev/null | awk -v mod="$GORELEASER_MODULE" '$1 == "mod" && $2 == mod { print $3 }'
}

tools="${XDG_CACHE_HOME:-$HOME/.cache}/sessfix-tools"

find_goreleaser() {
  local gobin candidates c
  gobin="$(go env GOBIN)"
  candidates=("$PWD/.cache/bin/goreleaser" "$tools/goreleaser-$GORELEASER_VERSION")
  [ -n "$gobin" ] && candidates+=("$gobin/goreleaser")
  candidates+=("$(go env GOPATH)/bin/goreleaser")
  for c in "${candidates[@]}"; do
    if [ -x "$c" ] && [ "$(version_of "$c")" = "$GORELEASER_VERSION" ]; then
      printf '%s\n' "$c"
      return 0
    fi
  done
  return 1
}

if ! GORELEASER="$(find_goreleaser)"; then
  say "installing goreleaser $GORELEASER_VERSION into .cache/bin (from the Go module proxy)"
  mkdir -p .cache/bin
  GOBIN="$PWD/.cache/bin" go install "$GORELEASER_MODULE@$GORELEASER_VERSION"
  GORELEASER="$PWD/.cache/bin/goreleaser"
  # Best effort: a tool cache that cannot be written only costs the next
  # checkout the same build.
  { mkdir -p "$tools" && cp "$GORELEASER" "$tools/.goreleaser-$$" &&
    mv "$tools/.goreleaser-$$" "$tools/goreleaser-$GORELEASER_VERSION"; } 2>/dev/null || true
fi
say "using $GORELEASER ($(version_of "$GORELEASER"))"

# goreleaser reads the git state (commit, dirty or not) for the snapshot.
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  say "not a git checkout: goreleaser needs one"
  exit 1
fi

say "goreleaser check"
"$GORELEASER" check

say "goreleaser build --snapshot --clean"
"$GORELEASER" build --snapshot --clean

# The before hook made what the archives ship besides the binary.
for f in completions/sessfix.bash completions/sessfix.zsh completions/sessfix.fish completions/sessfix.powershell \
  manpages/sessfix.1 manpages/sessfix-scan.1; do
  if [ ! -s "$f" ]; then
    say "$f is missing or empty: scripts/gen-completions.sh did not make it"
    exit 1
  fi
done

bin="$(find dist -path '*linux_amd64*' -type f -name sessfix | head -n 1)"
if [ -z "$bin" ]; then
  say "no linux/amd64 binary under dist/"
  exit 1
fi
out="$("$bin" version)"
say "$bin version: $out"
case "$out" in
  "sessfix "*) ;;
  *) say "unexpected version output"; exit 1 ;;
esac
if [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ]; then
  # A static binary: no dynamic section (CGO_ENABLED=0).
  if command -v readelf >/dev/null 2>&1 && readelf -d "$bin" 2>/dev/null | grep -q NEEDED; then
    say "$bin is dynamically linked; releases must be static"
    exit 1
  fi
fi
if [ -n "${BENCH_BASELINE:-}" ]; then
  say "scripts/bench-compare.sh $BENCH_BASELINE (scan benchmarks, HEAD against it)"
  scripts/bench-compare.sh "$BENCH_BASELINE"
fi
say "ok"
