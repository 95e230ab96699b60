#!/usr/bin/env bash
# Time `sessfix scan` against merely reading the same bytes, on generated
# stores, and measure its peak memory and CPU use. docs/performance.md has
# the results of a run and explains them.
#
#   scripts/bench.sh                 # 125 sessions, 100,000 parts per store
#   SESSIONS=20 RUNS=3 scripts/bench.sh
#
# Environment:
#   OUT       where binaries and stores go (default $TMPDIR/sessfix-bench-sh;
#             stores are kept and reused: about 2 GB)
#   SESSIONS  sessions in the large stores (default 125)
#   SHAPES    shapes to time (default "sqlite storage sessions")
#   RUNS      timed runs per command (default 5, after one warm-up run)
#
# Needs go; uses hyperfine and GNU time (/usr/bin/time), installing them
# with apt-get when missing and possible, else falls back to bash's time.
set -euo pipefail

cd "$(dirname "$0")/.."
OUT=${OUT:-${TMPDIR:-/tmp}/sessfix-bench-sh}
SESSIONS=${SESSIONS:-125}
SHAPES=${SHAPES:-"sqlite storage sessions"}
RUNS=${RUNS:-5}
BIN=$OUT/bin
mkdir -p "$BIN" "$OUT/stores"

install() { # install an apt package when we can, quietly
	if command -v apt-get >/dev/null 2>&1; then
		local sudo=""
		[ "$(id -u)" -eq 0 ] || sudo="sudo -n"
		$sudo apt-get install -y -qq "$1" >/dev/null 2>&1 ||
			{ $sudo apt-get update -qq >/dev/null 2>&1 && $sudo apt-get install -y -qq "$1" >/dev/null 2>&1; } || true
	fi
}
command -v hyperfine >/dev/null 2>&1 || install hyperfine
[ -x /usr/bin/time ] || install time

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//'), go $(go env GOVERSION)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"

echo "building sessfix and readstore into $BIN"
go build -o "$BIN/sessfix" .
go build -o "$BIN/readstore" ./internal/opencodetest/storegen/cmd/readstore

# gen NAME SHAPE ARGS...: generate a store once; print its path.
gen() {
	local name=$1 shape=$2
	shift 2
	local dir=$OUT/stores/$name
	if [ ! -s "$dir.path" ]; then
		rm -rf "$dir"
		echo "generating $name ($shape $*)" >&2
		go run ./internal/opencodetest/storegen/cmd/storegen -shape "$shape" -out "$dir" "$@" >"$dir.path" 2>"$dir.stats"
	fi
	cat "$dir.path"
}

# mean SECONDS of a command, with hyperfine or a bash loop.
declare -A MEAN
timeit() { # timeit KEY COMMAND
	local key=$1 cmd=$2
	if command -v hyperfine >/dev/null 2>&1; then
		# -i: sessfix scan exits 1 because the generated stores have defects.
		hyperfine -i --warmup 1 --runs "$RUNS" --export-json "$OUT/$key.json" "$cmd" >/dev/null 2>&1
		MEAN[$key]=$(awk -F': *' '/"mean"/ {gsub(/,/, "", $2); printf "%.3f", $2; exit}' "$OUT/$key.json")
	else
		bash -c "$cmd" >/dev/null 2>&1 || true # warm-up
		local start end
		start=$(date +%s.%N)
		for _ in $(seq "$RUNS"); do bash -c "$cmd" >/dev/null 2>&1 || true; done
		end=$(date +%s.%N)
		MEAN[$key]=$(awk -v s="$start" -v e="$end" -v n="$RUNS" 'BEGIN {printf "%.3f", (e - s) / n}')
	fi
}

echo
echo "== scan vs read (warm cache, mean of $RUNS runs) =="
printf '%-10s %10s %13s %12s %12s %8s %8s\n' shape records scan read-go read-cat scan/go scan/cat
for shape in $SHAPES; do
	path=$(gen "$shape" "$shape" -sessions "$SESSIONS")
	records=$(awk '/MB of records/ {for (i = 1; i <= NF; i++) if ($i == "MB") print $(i-1)}' "$OUT/stores/$shape.stats")
	timeit "$shape-scan" "$BIN/sessfix scan --color=never $path"
	timeit "$shape-read" "$BIN/readstore $path"
	cat_mean="-"
	cat_ratio="-"
	# cat is the cheapest read: one process per 2000 files, no Go runtime.
	if [ -d "$path" ]; then
		timeit "$shape-cat" "find $path -type f -print0 | xargs -0 -P$(nproc) -n 2000 cat"
		cat_mean=${MEAN[$shape-cat]}
		cat_ratio=$(awk -v a="${MEAN[$shape-scan]}" -v b="$cat_mean" 'BEGIN {printf "%.2fx", a / b}')
	fi
	ratio=$(awk -v a="${MEAN[$shape-scan]}" -v b="${MEAN[$shape-read]}" 'BEGIN {printf "%.2fx", a / b}')
	printf '%-10s %7s MB %11s s %10s s %10s s %8s %8s\n' "$shape" "$records" "${MEAN[$shape-scan]}" "${MEAN[$shape-read]}" "$cat_mean" "$ratio" "$cat_ratio"
done

echo
echo "== memory and CPU of one scan (/usr/bin/time) =="
measure() { # measure NAME PATH
	local name=$1 path=$2 log=$OUT/$1.time
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -v "$BIN/sessfix" scan --color=never "$path" >/dev/null 2>"$log" || true
		awk -v name="$name" -v stats="$(grep -o '[0-9.]* MB of records (largest session [0-9.]* MB)' "$OUT/stores/$name.stats")" '
			/Maximum resident set size/ {rss = $NF}
			/User time/ {user = $NF}
			/System time/ {sys = $NF}
			/Elapsed \(wall clock\)/ {n = split($NF, t, ":"); wall = t[n] + (n > 1 ? t[n-1] * 60 : 0)}
			END {printf "%-19s %-40s %8.1f MB %7.2fs %7.2fs %6.2f\n", name, stats, rss / 1024, user + sys, wall, (user + sys) / wall}' "$log"
	else
		echo "$name: /usr/bin/time not available"
	fi
}
printf '%-19s %-40s %11s %8s %8s %6s\n' store size peak-RSS cpu wall cores
small=$(gen small-sqlite sqlite -sessions 5)
large=$(gen sqlite sqlite -sessions "$SESSIONS")
big=$(gen bigsessions-sqlite sqlite -sessions 16 -messages 1600)
measure small-sqlite "$small"
measure sqlite "$large"
measure bigsessions-sqlite "$big"
smallj=$(gen small-sessions sessions -sessions 5)
largej=$(gen sessions sessions -sessions "$SESSIONS")
measure small-sessions "$smallj"
measure sessions "$largej"
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
