#!/usr/bin/env bash
# Compare the benchmarks of HEAD with those of a baseline commit on this
# machine, in one run: both test binaries are built from clean trees (git
# archive), then run in alternation (base, head, head, base, ...) so that
# load from other work falls on both alike. For each benchmark it prints the
# median of each side and the median of the per-pair ratios head/base, and
# fails (exit 1) when a median ratio is above THRESHOLD. Never a wall-clock
# assertion in a unit test: run it by hand or from scripts/release-check.sh.
#
#   scripts/bench-compare.sh BASELINE [BENCH-REGEX]
#   scripts/bench-compare.sh 4ef8574 'ScanSQLite$|ReadOnlySQLite'
#   PKG=./pkg/fix scripts/bench-compare.sh v1.4.0 'PlanSession/messages=4000,defects=0.3/joint'
#
# Environment:
#   PKG        the package whose benchmarks run (default ./pkg/scan)
#   PAIRS      alternated pairs of runs (default 7)
#   BENCHTIME  -benchtime of each run (default 1x)
#   METRIC     what is compared (default cpu-ms/op, the process CPU time the
#              scan benchmarks report, which load inflates less than wall
#              time; ns/op where a benchmark does not report it)
#   THRESHOLD  largest median head/base ratio allowed (default 1.15: on a
#              shared machine the same code varies by 10% between runs)
#   RATIOS     bars within HEAD's own run, "A:B:LIMIT" separated by spaces:
#              median(A)/median(B) of METRIC must be at most LIMIT, e.g.
#              "ScanSQLite:ReadOnlySQLite:2.5 ScanJSON/sessions:ReadOnlyJSON/sessions:1.3"
#   OUT        where binaries and results go (default a temporary directory)
#   SESSFIX_BENCH_DIR  where the generated stores are cached (see pkg/scan)
#
# Every run's load average is printed next to it: on a shared machine read
# the ratios, not the seconds.
set -euo pipefail

cd "$(dirname "$0")/.."
if [ $# -lt 1 ]; then
	echo "usage: scripts/bench-compare.sh BASELINE [BENCH-REGEX]" >&2
	exit 2
fi
BASE=$(git rev-parse --verify "$1^{commit}")
HEAD=$(git rev-parse --verify HEAD)
REGEX=${2:-'Scan(JSON|SQLite)$|ReadOnly'}
PKG=${PKG:-./pkg/scan}
PAIRS=${PAIRS:-7}
BENCHTIME=${BENCHTIME:-1x}
METRIC=${METRIC:-cpu-ms/op}
THRESHOLD=${THRESHOLD:-1.15}
RATIOS=${RATIOS:-}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/sessfix-bench-compare.XXXXXX")}
mkdir -p "$OUT"

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//'), go $(go env GOVERSION)"
echo "baseline ${BASE:0:12}, head ${HEAD:0:12}, package $PKG, benchmarks '$REGEX', $PAIRS pairs, -benchtime $BENCHTIME, metric $METRIC"
echo "results in $OUT"

build() { # build NAME COMMIT: a test binary of PKG from a clean tree of COMMIT
	local name=$1 commit=$2 tree=$OUT/$1-tree
	rm -rf "$tree"
	mkdir -p "$tree"
	git archive "$commit" | tar -x -C "$tree"
	(cd "$tree" && go test -c -o "$OUT/$name.test" "$PKG")
}
build base "$BASE"
build head "$HEAD"

: >"$OUT/base.txt"
: >"$OUT/head.txt"
run() { # run NAME PAIR: one run of a binary, from its package directory
	local name=$1 pair=$2 load
	load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
	(cd "$OUT/$name-tree/$PKG" && "$OUT/$name.test" -test.run '^$' -test.bench "$REGEX" -test.benchtime "$BENCHTIME") >"$OUT/$name.$pair.log" 2>&1 ||
		{ cat "$OUT/$name.$pair.log" >&2; echo "the $name benchmarks failed" >&2; exit 1; }
	grep '^Benchmark' "$OUT/$name.$pair.log" | sed "s/\$/ pair=$pair/" >>"$OUT/$name.txt"
	printf '  pair %d %-4s load %s\n' "$pair" "$name" "$load"
}
for pair in $(seq "$PAIRS"); do
	if [ $((pair % 2)) -eq 1 ]; then
		run base "$pair"
		run head "$pair"
	else
		run head "$pair"
		run base "$pair"
	fi
done

# The metric of every benchmark line, as "name pair value" (ns/op for
# benchmarks that do not report METRIC).
values() {
	awk -v metric="$METRIC" '{
		name = $1; sub(/-[0-9]+$/, "", name); v = ""; ns = ""; pair = $NF; sub(/pair=/, "", pair)
		for (i = 3; i < NF; i++) { if ($(i+1) == metric) v = $i; if ($(i+1) == "ns/op") ns = $i }
		if (v == "") v = ns
		print name, pair, v
	}' "$1"
}
values "$OUT/base.txt" >"$OUT/base.values"
values "$OUT/head.txt" >"$OUT/head.values"

median() { sort -g | awk '{a[NR] = $1} END {if (NR == 0) exit 1; print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

echo
printf '%-60s %14s %14s %12s\n' benchmark "base median" "head median" "head/base"
fail=0
for name in $(cut -d' ' -f1 "$OUT/head.values" | sort -u); do
	b=$(awk -v n="$name" '$1 == n {print $3}' "$OUT/base.values" | median || echo "")
	h=$(awk -v n="$name" '$1 == n {print $3}' "$OUT/head.values" | median)
	if [ -z "$b" ]; then
		printf '%-60s %14s %14s %12s\n' "$name" - "$h" "(new)"
		continue
	fi
	# The ratio of each pair, then their median: a pair ran back to back.
	r=$(LC_ALL=C join <(awk -v n="$name" '$1 == n {print $2, $3}' "$OUT/head.values" | LC_ALL=C sort) \
		<(awk -v n="$name" '$1 == n {print $2, $3}' "$OUT/base.values" | LC_ALL=C sort) |
		awk '$3 > 0 {print $2 / $3}' | median)
	verdict=""
	if awk -v r="$r" -v t="$THRESHOLD" 'BEGIN {exit !(r > t)}'; then
		verdict="  above $THRESHOLD"
		fail=1
	fi
	printf '%-60s %14s %14s %11.3fx%s\n' "$name" "$b" "$h" "$r" "$verdict"
done

for spec in $RATIOS; do
	IFS=: read -r a bb limit <<<"$spec"
	num=$(awk -v n="Benchmark$a" '$1 == n {print $3}' "$OUT/head.values" | median || echo "")
	den=$(awk -v n="Benchmark$bb" '$1 == n {print $3}' "$OUT/head.values" | median || echo "")
	if [ -z "$num" ] || [ -z "$den" ]; then
		echo "ratio $a / $bb: no results (check BENCH-REGEX)"
		fail=1
		continue
	fi
	ratio=$(awk -v a="$num" -v b="$den" 'BEGIN {printf "%.2f", a / b}')
	verdict="ok"
	if awk -v r="$ratio" -v t="$limit" 'BEGIN {exit !(r > t)}'; then
		verdict="above $limit"
		fail=1
	fi
	echo "head: $a / $bb = ${ratio}x (limit ${limit}x): $verdict"
done

# benchstat, when installed, for the record (docs/performance.md).
for bs in benchstat /work/shared-cache/bin/benchstat "$(go env GOPATH)/bin/benchstat"; do
	if command -v "$bs" >/dev/null 2>&1; then
		sed 's/ pair=[0-9]*$//' "$OUT/base.txt" >"$OUT/base.bench"
		sed 's/ pair=[0-9]*$//' "$OUT/head.txt" >"$OUT/head.bench"
		echo
		(cd "$OUT" && "$bs" base.bench head.bench) || true
		break
	fi
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
exit $fail
