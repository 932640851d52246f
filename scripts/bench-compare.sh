#!/usr/bin/env bash
# make bench-compare OLD=<binary or commit>: this build against another, judged through this
# machine's drift. CPU time (user + system), never wall clock, over runs that last seconds, the
# two builds alternated (A B A B …, ROUNDS of each):
#   - in process, one worker: `samlgate batch --jobs 1` over RECORDS signed ~8 KB responses,
#     encode only and with --verify (the verifier's and the encoder's cost per record, the
#     process's start-up taken off by a run over one record);
#   - end to end: scripts/load-compare.sh with BASELINE_BIN=OLD, its form workload with nginx and
#     the NIO floor as peers (pass-through and v1 exchange CPU per request), ROUNDS rounds at
#     CONNECTIONS (64).
# OLD is an executable, or a commit built once (release) in a worktree under .build/bench-compare/,
# whose binary is kept there (.build/bench-compare/<commit>.samlgate) and the worktree removed.
# Prints one table (median, min–max, new ÷ old); every run in $DIR/bench-compare.csv.
# Knobs: OLD (required), ROUNDS (5), RECORDS (20000), CONNECTIONS (64), DURATION (5), E2E (1; 0 skips).
set -euo pipefail
BIN=${BIN:-.build/release/samlgate}
DIR=${LOAD_DIR:-.run/load}
ROUNDS=${ROUNDS:-5}
RECORDS=${RECORDS:-20000}
MVPD=Cablevision
[ -n "${OLD:-}" ] || { echo "usage: make bench-compare OLD=<samlgate binary or commit>" >&2; exit 2; }

if [ -x "$OLD" ] && [ ! -d "$OLD" ]; then
    old_bin=$OLD
else
    commit=$(git rev-parse --verify "$OLD^{commit}") || { echo "OLD is neither an executable nor a commit: $OLD" >&2; exit 2; }
    tree=.build/bench-compare/$commit
    old_bin=.build/bench-compare/$commit.samlgate
    if [ ! -x "$old_bin" ]; then
        echo "building $commit (release) in $tree: the first time takes a while on few cores ..."
        [ -d "$tree" ] || git worktree add --detach -f "$tree" "$commit" >/dev/null
        (cd "$tree" && swift build -c release --product samlgate >/dev/null)
        cp "$tree/.build/release/samlgate" "$old_bin"
        git worktree remove --force "$tree"
    fi
fi
mkdir -p "$DIR"
. scripts/load/mint.sh
mint_responses "$RECORDS"

# The records as JSON Lines (the batch tool's input), and a file of one record for the start-up.
awk -v n="$RECORDS" 'NR <= n { printf "{\"SAMLResponse\":\"%s\"}\n", $0 }' "$DIR/responses.txt" > "$DIR/records.jsonl"
head -n 1 "$DIR/records.jsonl" > "$DIR/one-record.jsonl"
records=$(wc -l < "$DIR/records.jsonl")

# cpu BINARY FILE [ARGS…]: CPU seconds (user + system) of one batch run over FILE, from the
# kernel's accounting of the child (getrusage: finer than time(1)'s hundredths).
cpu() {
    python3 - "$@" <<'PY'
import resource, subprocess, sys
binary, file, *args = sys.argv[1:]
done = subprocess.run([binary, "batch", "--jobs", "1", *args, file], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if done.returncode != 0:
    sys.exit(f"batch failed ({done.returncode}): {binary} {' '.join(args)}")
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{usage.ru_utime + usage.ru_stime:.6f}")
PY
}

CSV="$DIR/bench-compare.csv"
echo "round,build,stage,us_per_operation" > "$CSV"
for round in $(seq 1 "$ROUNDS"); do
    for entry in "new=$BIN" "old=$old_bin"; do
        name=${entry%%=*} binary=${entry#*=}
        for stage in encode verify; do
            args=()
            # A record that does not verify fails the run: a build that refuses them is not timed.
            [ "$stage" = verify ] && args=(--verify --trust "$DIR/idp/cert.pem" --fail-on-error)
            whole=$(cpu "$binary" "$DIR/records.jsonl" "${args[@]}")
            start=$(cpu "$binary" "$DIR/one-record.jsonl" "${args[@]}")
            awk -v r="$round" -v b="$name" -v s="batch-$stage" -v w="$whole" -v o="$start" -v n="$records" \
                'BEGIN { printf "%d,%s,%s,%.2f\n", r, b, s, (w - o) * 1e6 / (n - 1) }' | tee -a "$CSV"
        done
    done
done

if [ "${E2E:-1}" != 0 ]; then
    BIN=$BIN BASELINE_BIN=$old_bin ROUNDS=$ROUNDS CONNECTIONS=${CONNECTIONS:-64} LOAD_DIR=$DIR \
        WORKLOADS=form PEERS="nginx floor" ./scripts/load-compare.sh
    awk -F, 'NR > 1 && $2 == "form" {
        build = ($3 ~ /^baseline-/) ? "old" : ($3 == "nginx" ? "nginx" : ($3 == "nio-floor" ? "floor" : "new"))
        stage = $3; sub(/^(baseline|samlgate)-/, "", stage)
        printf "%d,%s,e2e-%s-%s,%s\n", $1, build, stage, $4, $11
    }' "$DIR/compare.csv" >> "$CSV"
fi

echo
python3 - "$CSV" <<'PY'
import csv, statistics, sys
from collections import defaultdict
runs = defaultdict(list)
for row in csv.DictReader(open(sys.argv[1])):
    runs[(row["stage"], row["build"])].append(float(row["us_per_operation"]))
print("| stage | build | CPU µs per operation, median | min–max | runs | new ÷ old |")
print("|---|---|---:|---:|---:|---:|")
for stage in sorted({s for s, _ in runs}):
    old = runs.get((stage, "old"))
    for build in ("new", "old", "nginx", "floor"):
        values = runs.get((stage, build))
        if not values:
            continue
        ratio = f"{statistics.median(values) / statistics.median(old):.3f}" if build == "new" and old else ""
        print(f"| {stage} | {build} | {statistics.median(values):.1f} | {min(values):.1f}–{max(values):.1f} | {len(values)} | {ratio} |")
PY
