#!/usr/bin/env bash
# Stress test, not part of the test suite: kill `sessfix fix --yes` with
# SIGKILL at random times, ROUNDS times, on copies of STORE (an opencode.db
# or a storage/ directory that fix repairs), and check after each kill that
# `sessfix undo RUN` (without --force) puts the copy back as it was, leaving
# no lock and no temporary file.
#
# Where the kills land depends on how fast the machine is: that is the point
# of a stress test, and why the test suite kills at numbered write steps
# instead (TestUndoOfAKilledFix, internal/faultpoint).
#
# usage: scripts/stress-kill.sh STORE [ROUNDS] [MAX_DELAY_MS]
set -euo pipefail
cd "$(dirname "$0")/.."

store=${1:?usage: scripts/stress-kill.sh STORE [ROUNDS] [MAX_DELAY_MS]}
rounds=${2:-100}
max_ms=${3:-400}
store=$(cd "$(dirname "$store")" && pwd)/$(basename "$store")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/sessfix" .

# state prints what undo must restore: every row of a database, or every
# file (path, mode, sha256) of a tree.
state() {
  if [ -f "$1" ]; then
    sqlite3 "$1" .dump
  else
    (cd "$1" && find . -name '.sessfix.lock' -prune -o -printf '%p %m\n' | sort &&
      find . -type f ! -name '.sessfix.lock' -exec sha256sum {} + | sort)
  fi
}
before=$(state "$store")

killed=0 incomplete=0 untouched=0 failed=0
for round in $(seq 1 "$rounds"); do
  dir="$work/round-$round"
  mkdir -p "$dir"
  cp -a "$store" "$dir/"
  copy="$dir/$(basename "$store")"
  export SESSFIX_STATE_DIR="$dir/state" NO_COLOR=1
  "$work/sessfix" fix --yes -q "$copy" >/dev/null 2>&1 &
  pid=$!
  sleep "$(awk -v r="$RANDOM" -v m="$max_ms" 'BEGIN { printf "%.4f", r / 32767 * m / 1000 }')"
  kill -KILL "$pid" 2>/dev/null && killed=$((killed + 1)) || true
  wait "$pid" 2>/dev/null || true
  run=$(ls "$dir/state/backups" 2>/dev/null | grep '^2' | tail -n 1 || true)
  if [ -z "$run" ]; then
    untouched=$((untouched + 1))
  else
    if "$work/sessfix" backups 2>/dev/null | grep -q incomplete; then incomplete=$((incomplete + 1)); fi
    if ! "$work/sessfix" undo "$run" >"$dir/undo.log" 2>&1; then
      echo "round $round: undo $run failed:" >&2
      cat "$dir/undo.log" >&2
      failed=$((failed + 1))
      continue
    fi
  fi
  if [ "$(state "$copy")" != "$before" ]; then
    echo "round $round: the store is not as before (run ${run:-none}); kept in $dir" >&2
    trap - EXIT
    failed=$((failed + 1))
  fi
  if [ -n "$(find "$(dirname "$copy")" -name '.sessfix-*.tmp' -o -name '.sessfix.lock' | head -n 1)" ]; then
    echo "round $round: a lock or temporary file was left" >&2
    failed=$((failed + 1))
  fi
done
echo "$rounds rounds: $killed killed while running, $incomplete left an incomplete run, $untouched before any backup run, $failed failed"
[ "$failed" -eq 0 ]
