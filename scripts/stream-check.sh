#!/usr/bin/env bash
# make stream-check: a large answer and a large upload through the gateway, with the gateway's
# resident memory sampled throughout. The backend writes its answer as fast as it can while the
# client reads at RATE, and reads the upload at RATE while the client sends as fast as it can:
# without backpressure both ways the gateway would hold most of SIZE in memory.
# Knobs: SIZE (bytes, 200 MB), RATE (bytes/s on the slow side, 40 MB/s).
set -euo pipefail
BIN=${BIN:-.build/release/samlgate}
. "$(dirname "$0")/load/common.sh"
DIR=${LOAD_DIR:-.run/stream}
SIZE=${SIZE:-209715200}
RATE=${RATE:-41943040}
mkdir -p "$DIR/trust/Cablevision"
[ -f "$DIR/idp/cert.pem" ] || "$BIN" idp keygen --out "$DIR/idp" >/dev/null
cp "$DIR/idp/cert.pem" "$DIR/trust/Cablevision/cert.pem"
[ "$(stat -c %s "$DIR/upload.bin" 2>/dev/null || echo 0)" = "$SIZE" ] || head -c "$SIZE" /dev/zero > "$DIR/upload.bin"

UPSTREAM_PORT=$(free_port)
GATEWAY_PORT=$(free_port)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM
python3 scripts/load/stream_upstream.py "$UPSTREAM_PORT" "$SIZE" "$RATE" &
pids+=($!)
# The backend must be up before the gateway's first request: a refused connection cools it down.
for _ in $(seq 1 100); do curl -sS -o /dev/null -I "http://127.0.0.1:$UPSTREAM_PORT/" 2>/dev/null && break; sleep 0.1; done
"$BIN" serve --port "$GATEWAY_PORT" --upstream "http://127.0.0.1:$UPSTREAM_PORT" --trust-store "$DIR/trust" \
    --log-level warning --body-limit 1048576 --read-timeout 60 --total-timeout 120 $(throttle_args "$BIN") >/dev/null 2>"$DIR/gateway.log" &
gateway=$!
pids+=($gateway)
for _ in $(seq 1 100); do curl -fsS -o /dev/null "http://127.0.0.1:$GATEWAY_PORT/healthz" 2>/dev/null && break; sleep 0.1; done


rss() { awk '/^VmRSS/ {print $2}' "/proc/$gateway/status"; }
# measure NAME COMMAND...: runs the transfer while sampling the gateway's RSS every 0.1 s.
measure() {
    local name=$1 before peak started now result
    shift
    before=$(rss)
    peak=$before
    started=$(date +%s.%N)
    "$@" > "$DIR/$name.out" 2>"$DIR/$name.err" &
    local transfer=$!
    while kill -0 "$transfer" 2>/dev/null; do
        now=$(rss)
        [ "$now" -gt "$peak" ] && peak=$now
        sleep 0.1
    done
    wait "$transfer" || { echo "$name failed: $(cat "$DIR/$name.err")" >&2; return 1; }
    result=$(cat "$DIR/$name.out")
    awk -v n="$name" -v b="$before" -v p="$peak" -v s="$started" -v e="$(date +%s.%N)" -v r="$result" \
        'BEGIN { printf "| %s | %s | %.1f s | %.1f MB | %.1f MB | %.1f MB |\n", n, r, e - s, b / 1024, p / 1024, (p - b) / 1024 }'
}

echo "| transfer | bytes through the gateway | time | gateway RSS before | peak | growth |"
echo "|---|---:|---:|---:|---:|---:|"
measure download curl -sS --fail --limit-rate "$RATE" -o /dev/null -w '%{size_download}' "http://127.0.0.1:$GATEWAY_PORT/stream/download"
measure upload curl -sS --fail -T "$DIR/upload.bin" -X POST "http://127.0.0.1:$GATEWAY_PORT/stream/upload"
