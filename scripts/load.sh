#!/usr/bin/env bash
# make load: wrk against gateway + reference upstream on loopback with freshly minted, unique,
# signed ~8 KB responses. Prints requests/s, p50/p99 latency and gateway CPU-µs per request.
# Knobs: DURATION (s, default 10), CONNECTIONS (64), THREADS (1: wrk runs each thread's Lua init after starting the previous thread, so with several threads the first one loads the gateway before the measured window opens), RESPONSES (minted, default
# 70000 — more than the run can use, so no response is replayed), WORKERS (gateway, default cores),
# PASS_THROUGH=1 (the same bodies to a path the gateway only proxies — the upstream answers 404 —
# to measure what the HTTP server, client and kernel cost the gateway without the SAML work),
# REPLAY_STORE (the gateway's replay-store: memory by default, or redis://…), GATEWAY_ARGS (more
# flags for samlgate serve).
set -euo pipefail
BIN=${BIN:-.build/release/samlgate}
DIR=${LOAD_DIR:-.run/load}
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-1}
RESPONSES=${RESPONSES:-70000}
MVPD=Cablevision
GATEWAY_PORT=${GATEWAY_PORT:-18480}
UPSTREAM_PORT=${UPSTREAM_PORT:-19490}
LOAD_PATH=/api/v1/tokens/authn
[ -n "${PASS_THROUGH:-}" ] && LOAD_PATH=/load/pass-through

command -v wrk >/dev/null || { echo "wrk is not installed (make deps-load installs it)"; exit 1; }
. scripts/load/mint.sh
. scripts/load/common.sh
mint_responses "$RESPONSES"

pids=()
cleanup() { for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM
"$BIN" upstream --port "$UPSTREAM_PORT" --log-level error >/dev/null 2>&1 &
upstream=$!
pids+=($upstream)
"$BIN" serve --port "$GATEWAY_PORT" --upstream "http://127.0.0.1:$UPSTREAM_PORT" --trust-store "$DIR/trust" \
    --log-level warning ${WORKERS:+--workers "$WORKERS"} ${REPLAY_STORE:+--replay-store "$REPLAY_STORE"} ${GATEWAY_ARGS:-} $(throttle_args "$BIN") >/dev/null 2>"$DIR/gateway.log" &
gateway=$!
pids+=($gateway)
await_or_fail "load: the gateway's /readyz" 100 ready "http://127.0.0.1:$GATEWAY_PORT/readyz"

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
machine() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
ticks=$(getconf CLK_TCK)
before=$(cpu "$gateway")
upstream_before=$(cpu "$upstream")
if [ -n "${PERF:-}" ]; then perf record -F ${PERF_FREQ:-999} ${PERF_CALLGRAPH:--g} -o "$PERF" -p "$([ "${PERF_TARGET:-gateway}" = upstream ] && echo "$upstream" || echo "$gateway")" -- sleep "$((DURATION + 4))" >/dev/null 2>&1 & pids+=($!); fi
machine_before=$(machine)
wall_before=$(date +%s.%N)
wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -s scripts/load/exchange.lua \
    "http://127.0.0.1:$GATEWAY_PORT" -- "$DIR/responses.txt" "$MVPD" "$THREADS" "$LOAD_PATH" | tee "$DIR/wrk.out"
after=$(cpu "$gateway")
upstream_after=$(cpu "$upstream")
machine_after=$(machine)
wall_after=$(date +%s.%N)

line=$(grep '^LOAD ' "$DIR/wrk.out")
requests=$(sed -E 's/.*requests=([0-9]+).*/\1/' <<< "$line")
errors=$(sed -E 's/.*errors_status=([0-9]+).*/\1/' <<< "$line")
duration=$(sed -E 's/.*duration_us=([0-9]+).*/\1/' <<< "$line")
p50=$(sed -E 's/.*p50_us=([0-9]+).*/\1/' <<< "$line")
p99=$(sed -E 's/.*p99_us=([0-9]+).*/\1/' <<< "$line")
accepted=$(curl -fsS "http://127.0.0.1:$GATEWAY_PORT/metrics" | awk -F' ' '/^samlgate_requests_total\{route="v1_tokens_authn",status="204"\}/ {print $2}')
accepted=${accepted:-0}
echo "gateway errors by code (from /metrics):"
curl -fsS "http://127.0.0.1:$GATEWAY_PORT/metrics" | grep '^samlgate_errors_total' || echo "  none"
awk -v g=$((after - before)) -v m=$((machine_after - machine_before)) -v t="$ticks" -v w0="$wall_before" -v w1="$wall_after" \
    -v u=$((upstream_after - upstream_before)) -v r="$requests" \
    'BEGIN { printf "gateway CPU %.2f s, upstream CPU %.2f s (%.0f µs per request), whole machine busy %.2f s, over %.2f s of wall time (incl. wrk start-up)\n", g / t, u / t, (u / t) * 1e6 / (r > 0 ? r : 1), m / t, w1 - w0 }' 
awk -v r="$requests" -v a="$accepted" -v e="$errors" -v d="$duration" -v p50="$p50" -v p99="$p99" \
    -v cpu=$((after - before)) -v t="$ticks" -v c="$CONNECTIONS" 'BEGIN {
    secs = d / 1e6
    printf "\n| connections | requests/s | verified exchanges/s (204) | non-2xx | p50 | p99 | gateway CPU per request |\n"
    printf "|---:|---:|---:|---:|---:|---:|---:|\n"
    printf "| %d | %.0f | %.0f | %d | %.2f ms | %.2f ms | %.0f µs |\n", c, r / secs, a / secs, e, p50 / 1000, p99 / 1000, (cpu / t) * 1e6 / (r > 0 ? r : 1)
}'
# One line for scripts that compare runs (scripts/load-replay-store.sh).
echo "SUMMARY requests=$requests accepted=$accepted errors=$errors duration_us=$duration p99_us=$p99 gateway_ticks=$((after - before)) ticks=$ticks"
