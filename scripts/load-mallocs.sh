#!/usr/bin/env bash
# make load-mallocs: heap allocations per proxied request and per v1 exchange, end to end.
# The gateway runs with jemalloc's thread caches off (every malloc reaches the arena, so the
# arena's nmalloc counts each one) and prints its statistics at exit. For each binary (BIN, and
# BASELINE_BIN when given, alternated) and each kind (pass-through, exchange): a gateway started
# afresh, wrk over 16 connections for DURATION seconds, stopped; minus an idle start and stop of
# the same binary. Counts do not drift with the machine's load, so one round is enough; ROUNDS
# (2) shows the spread. Prints one table; every run in $DIR/mallocs.csv.
# Knobs: BIN, BASELINE_BIN, ROUNDS (2), DURATION (3), RESPONSES (signed responses minted).
set -euo pipefail
BIN=${BIN:-.build/release/samlgate}
DIR=${LOAD_DIR:-.run/load}
ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-3}
MVPD=Cablevision
PASS_LINES=4000

mkdir -p "$DIR"
. scripts/load/common.sh
require_load_tools
. scripts/load/mint.sh
mint_responses "${RESPONSES:-$(( DURATION * 10000 ))}"

UPSTREAM_PORT=$(free_port)
GATEWAY_PORT=$(free_port)

upstream=""
gateway=""
stats=""
cleanup() {
    [ -n "$gateway" ] && kill -TERM "$gateway" 2>/dev/null || true
    [ -n "$stats" ] && rm -f "$stats"
    [ -n "$upstream" ] && kill -TERM "$upstream" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

"$BIN" upstream --port "$UPSTREAM_PORT" --log-level error >/dev/null 2>&1 &
upstream=$!
wait_for "http://127.0.0.1:$UPSTREAM_PORT/"

# gateway_mallocs BINARY KIND: sets REQUESTS and MALLOCS for one gateway life; KIND idle sends
# nothing. Runs in this shell, so the cleanup trap sees the gateway it starts.
gateway_mallocs() {
    local binary=$1 kind=$2 path lines
    REQUESTS=0
    stats=$(mktemp "$DIR/jemalloc.XXXXXX")
    MALLOC_CONF=tcache:false,stats_print:true "$binary" serve --port "$GATEWAY_PORT" \
        --upstream "http://127.0.0.1:$UPSTREAM_PORT" --trust-store "$DIR/trust" --log-level warning $(throttle_args "$binary") >/dev/null 2>"$stats" &
    gateway=$!
    wait_for "http://127.0.0.1:$GATEWAY_PORT/readyz"
    if [ "$kind" != idle ]; then
        if [ "$kind" = exchange ]; then path=/api/v1/tokens/authn lines=0; else path=/load/pass-through lines=$PASS_LINES; fi
        wrk -t1 -c16 -d"${DURATION}s" -s scripts/load/exchange.lua "http://127.0.0.1:$GATEWAY_PORT" \
            -- "$DIR/responses.txt" "$MVPD" 1 "$path" "$lines" > "$DIR/wrk.out" 2>&1
        REQUESTS=$(grep '^LOAD ' "$DIR/wrk.out" | sed -E 's/.* requests=([0-9]+).*/\1/')
        # The reference upstream answers the pass-through path 404 (proxied all the same); every
        # exchange must be accepted, or the count would be a refusal's.
        if [ "$kind" = exchange ] && grep -q 'errors_status=[1-9]' "$DIR/wrk.out"; then
            echo "exchange: refused answers" >&2
            cat "$DIR/wrk.out" >&2
            return 1
        fi
    fi
    kill -TERM "$gateway"
    wait "$gateway" 2>/dev/null || true
    gateway=""
    MALLOCS=$(awk '$1 == "total:" { print $3; exit }' "$stats")
    rm -f "$stats"
    [ -n "$MALLOCS" ] || { echo "$binary printed no allocation statistics at exit" >&2; return 1; }
}

CSV="$DIR/mallocs.csv"
echo "round,binary,kind,requests,mallocs,idle_mallocs,mallocs_per_request" > "$CSV"
binaries=("samlgate=$BIN")
[ -n "${BASELINE_BIN:-}" ] && binaries+=("baseline=$BASELINE_BIN")
for round in $(seq 1 "$ROUNDS"); do
    for entry in "${binaries[@]}"; do
        name=${entry%%=*} binary=${entry#*=}
        gateway_mallocs "$binary" idle
        idle=$MALLOCS
        for kind in pass-through exchange; do
            gateway_mallocs "$binary" "$kind"
            awk -v r="$round" -v b="$name" -v k="$kind" -v n="$REQUESTS" -v m="$MALLOCS" -v i="$idle" \
                'BEGIN { printf "%d,%s,%s,%d,%d,%d,%.1f\n", r, b, k, n, m, i, (m - i) / n }' | tee -a "$CSV"
        done
    done
done
echo
echo "mallocs per request (median over rounds):"
python3 - "$CSV" <<'PY'
import csv, statistics, sys
runs = {}
for row in csv.DictReader(open(sys.argv[1])):
    runs.setdefault((row["binary"], row["kind"]), []).append(float(row["mallocs_per_request"]))
for (binary, kind), values in sorted(runs.items()):
    print(f"  {binary:10} {kind:13} {statistics.median(values):8.1f}   (runs: {', '.join(f'{v:.1f}' for v in values)})")
PY
