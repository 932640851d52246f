#!/usr/bin/env bash
# make soak: the gateway and the reference upstream (release build) on loopback under a steady
# mix of proxied requests, exchanges, replays, forged and broken responses and local answers
# (scripts/load/soak.lua), for SOAK_SECONDS (default 600). Every 5 s the gateway's resident
# memory, open descriptors, threads and request counters go into .run/soak/soak.csv; at the end
# scripts/load/soak_report.py prints the verdict and draws .run/soak/soak.png.
# Goals: after WARMUP seconds (default 60) RSS grows < 5 %, descriptors and threads stay flat, no
# answer has a status its kind may not get, and wrk saw no connect/read/write error or timeout
# (every request sent was answered). Exit status 1 when a goal is missed.
# The replay store is a redis-server of its own (replay-store: redis://): with the memory store,
# every accepted assertion stays in the gateway's memory until it expires (hours for these
# responses), growth that is the cache working, not a leak, and would hide one.
# Knobs: SOAK_SECONDS, WARMUP, CONNECTIONS (64), RESPONSES (fresh exchanges minted, 40000; when
# used up, the same responses come back as replays the gateway must refuse), REDIS_PORT.
set -euo pipefail
BIN=${BIN:-.build/release/samlgate}
DIR=${SOAK_DIR:-.run/soak}
DURATION=${SOAK_SECONDS:-600}
WARMUP=${WARMUP:-60}
CONNECTIONS=${CONNECTIONS:-64}
RESPONSES=${RESPONSES:-40000}
INTERVAL=5
MVPD=Cablevision
GATEWAY_PORT=${GATEWAY_PORT:-18580}
UPSTREAM_PORT=${UPSTREAM_PORT:-19590}
REDIS_PORT=${REDIS_PORT:-16579}

command -v wrk >/dev/null || { echo "wrk is not installed (make deps-load installs it)"; exit 1; }
command -v redis-server >/dev/null || { echo "redis-server is not installed (make deps installs it)"; exit 1; }
mkdir -p "$DIR"
. scripts/load/mint.sh
. scripts/load/common.sh
mint_responses "$RESPONSES"
# Responses signed by a key the trust store does not hold: refused with 401, never forwarded.
if [ ! -s "$DIR/forged.txt" ]; then
    "$BIN" idp keygen --out "$DIR/forger" >/dev/null
    "$BIN" idp issue --key "$DIR/forger/key.pem" --cert "$DIR/forger/cert.pem" --mvpd "$MVPD" --user soak@example.com \
        --ttl 7200 --pad-to 8192 --encoded --count 50 > "$DIR/forged.txt"
fi

pids=()
cleanup() { for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --loglevel warning >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
"$BIN" upstream --port "$UPSTREAM_PORT" --log-level error >/dev/null 2>&1 &
pids+=($!)
"$BIN" serve --port "$GATEWAY_PORT" --upstream "http://127.0.0.1:$UPSTREAM_PORT" --trust-store "$DIR/trust" \
    --replay-store "redis://127.0.0.1:$REDIS_PORT" --log-level error $(throttle_args "$BIN") >/dev/null 2>"$DIR/gateway.log" &
gateway=$!
pids+=($gateway)
await_or_fail "soak: the gateway's /readyz" 100 ready "http://127.0.0.1:$GATEWAY_PORT/readyz"

# The sampler: one line per INTERVAL while wrk runs.
csv="$DIR/soak.csv"
echo "seconds,rss_kb,fds,threads,requests,cpu_seconds" > "$csv"
sample() {
    local start=$1 now rss fds threads requests cpu
    while kill -0 "$gateway" 2>/dev/null; do
        now=$(( $(date +%s) - start ))
        rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$gateway/status")
        threads=$(awk '/^Threads:/ {print $2}' "/proc/$gateway/status")
        fds=$(ls "/proc/$gateway/fd" | wc -l)
        requests=$(curl -fsS --max-time 2 "http://127.0.0.1:$GATEWAY_PORT/metrics" \
            | awk '/^samlgate_requests_total\{/ {sum += $2} END {printf "%d", sum}')
        cpu=$(awk -v ticks="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / ticks}' "/proc/$gateway/stat")
        echo "$now,$rss,$fds,$threads,$requests,$cpu" >> "$csv"
        sleep "$INTERVAL"
    done
}
sample "$(date +%s)" &
sampler=$!
pids+=($sampler)

echo "soak: $DURATION s, $CONNECTIONS connections, warm-up $WARMUP s; samples in $csv"
wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency --timeout 10s -s scripts/load/soak.lua \
    "http://127.0.0.1:$GATEWAY_PORT" -- "$DIR/responses.txt" "$DIR/forged.txt" "$MVPD" 1 | tee "$DIR/wrk.out"
sleep "$INTERVAL"
kill "$sampler" 2>/dev/null || true

. scripts/tools-venv.sh
tools_venv soak matplotlib=matplotlib
"$TOOLS_PYTHON" scripts/load/soak_report.py "$csv" "$DIR/wrk.out" "$DIR/soak.png" "$WARMUP" "$DURATION"
