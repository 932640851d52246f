#!/usr/bin/env bash
# make load-compare: what a proxied request costs samlgate next to nginx, in one run.
# Starts the reference upstream, nginx (scripts/load/nginx.conf, keep-alive to the upstream) and
# the gateway in front of the same upstream, then runs interleaved rounds: for each connection
# count, nginx pass-through, samlgate pass-through and samlgate v1 exchange, one after the other,
# so drift of this machine hits all three alike. The gateway is started afresh for each of its
# runs (an empty replay cache: no response is a replay, and no run inherits another's warm-up).
# Prints one table (median over rounds), writes every run to $DIR/compare.csv and the plots
# (throughput, p99 and proxy CPU per request against connections) to $DIR/*.png.
# Knobs: ROUNDS (3), DURATION (s per run, 5), CONNECTIONS ("1 16 64 256"), WORKERS (gateway),
# BASELINE_BIN (another samlgate build, e.g. the previous one: its pass-through and exchange are
# measured in the same rounds, labelled "baseline"), GATEWAY_ARGS (more `serve` flags for this
# build only, e.g. "--mode report-only": what a setting costs, against the baseline), FLOOR (1;
# 0 leaves out the NIO floor: Benchmarks/Drivers/NIOFloorProxy, a reverse proxy on the gateway's
# codecs that does nothing else, built here; its pass-through is what SwiftNIO and NIOHTTP1 cost
# per request, so the gap between it and samlgate is the gateway's own work).
set -euo pipefail
BIN=${BIN:-.build/release/samlgate}
DIR=${LOAD_DIR:-.run/load}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
CONNECTIONS=${CONNECTIONS:-"1 16 64 256"}
MVPD=Cablevision
VENV=.build/tools-venv
PASS_LINES=4000

. scripts/load/common.sh
require_load_tools nginx
. scripts/load/mint.sh
floor_bin=""
if [ "${FLOOR:-1}" != 0 ]; then
    (cd Benchmarks && swift build -c release --product NIOFloorProxy >/dev/null) \
        || { echo "building Benchmarks' NIOFloorProxy failed (FLOOR=0 runs without the NIO floor)" >&2; exit 1; }
    floor_bin=Benchmarks/.build/release/NIOFloorProxy
fi
# An exchange run sees at most ~10k verifications/s on this class of machine.
mint_responses "${RESPONSES:-$(( DURATION * 10000 ))}"

UPSTREAM_PORT=$(free_port)
NGINX_PORT=$(free_port)
FLOOR_PORT=$(free_port)
GATEWAY_PORT=$(free_port)
NGINX_DIR=$(fresh_dir "$DIR/nginx")

pids=()
gateway=""
cleanup() {
    [ -n "$gateway" ] && kill -TERM "$gateway" 2>/dev/null || true
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

"$BIN" upstream --port "$UPSTREAM_PORT" --log-level error >/dev/null 2>&1 &
pids+=($!)
sed -e "s#@PREFIX@#$NGINX_DIR#g" -e "s#@PORT@#$NGINX_PORT#g" -e "s#@UPSTREAM_PORT@#$UPSTREAM_PORT#g" \
    scripts/load/nginx.conf > "$NGINX_DIR/nginx.conf"
"$NGINX" -p "$NGINX_DIR" -c "$NGINX_DIR/nginx.conf" -e "$NGINX_DIR/nginx-error.log" &
nginx_master=$!
pids+=($nginx_master)
wait_for "http://127.0.0.1:$UPSTREAM_PORT/"
wait_for "http://127.0.0.1:$NGINX_PORT/"
floor=""
if [ -n "$floor_bin" ]; then
    # As many event loops as the gateway runs by default: the CPUs this process may use.
    "$floor_bin" --port "$FLOOR_PORT" --upstream-port "$UPSTREAM_PORT" --threads "$(nproc)" >/dev/null 2>&1 &
    floor=$!
    pids+=($floor)
    wait_for "http://127.0.0.1:$FLOOR_PORT/"
fi

# start_gateway [BINARY]: this build (with GATEWAY_ARGS) when none is named.
start_gateway() {
    local extra=""
    [ -n "${1:-}" ] || extra=${GATEWAY_ARGS:-}
    # shellcheck disable=SC2086
    "${1:-$BIN}" serve --port "$GATEWAY_PORT" --upstream "http://127.0.0.1:$UPSTREAM_PORT" --trust-store "$DIR/trust" \
        --log-level warning ${WORKERS:+--workers "$WORKERS"} $(throttle_args "${1:-$BIN}") $extra >/dev/null 2>>"$DIR/gateway.log" &
    gateway=$!
    wait_for "http://127.0.0.1:$GATEWAY_PORT/readyz"
}
stop_gateway() { kill -TERM "$gateway" 2>/dev/null || true; wait "$gateway" 2>/dev/null || true; gateway=""; }

# The processes whose CPU a run counts: the gateway's, the NIO floor's, or nginx's master and workers.
proxy_pids() {
    case "$1" in
        nginx) echo "$nginx_master $(pgrep -P "$nginx_master" | tr '\n' ' ')" ;;
        nio-floor) echo "$floor" ;;
        *) echo "$gateway" ;;
    esac
}

CSV="$DIR/compare.csv"
echo "round,proxy,connections,requests,seconds,requests_per_s,non_2xx_or_3xx,p50_ms,p99_ms,cpu_us_per_request" > "$CSV"

# run ROUND PROXY CONNECTIONS PORT PATH LINES
run() {
    local round=$1 proxy=$2 connections=$3 port=$4 path=$5 lines=$6 pids_now before after line
    pids_now=$(proxy_pids "$proxy")
    # shellcheck disable=SC2086
    before=$(ticks_of $pids_now)
    wrk -t1 -c"$connections" -d"${DURATION}s" --latency -s scripts/load/exchange.lua \
        "http://127.0.0.1:$port" -- "$DIR/responses.txt" "$MVPD" 1 "$path" "$lines" > "$DIR/wrk.out" 2>&1
    # shellcheck disable=SC2086
    after=$(ticks_of $pids_now)
    line=$(grep '^LOAD ' "$DIR/wrk.out") || { cat "$DIR/wrk.out" >&2; return 1; }
    awk -v line="$line" -v round="$round" -v proxy="$proxy" -v c="$connections" -v ticks=$((after - before)) -v hz="$HZ" 'BEGIN {
        n = split(line, f, /[ =]/); for (i = 2; i < n; i += 2) v[f[i]] = f[i + 1]
        secs = v["duration_us"] / 1e6; r = v["requests"]
        printf "%d,%s,%d,%d,%.3f,%.0f,%d,%.3f,%.3f,%.1f\n", round, proxy, c, r, secs, r / secs, v["errors_status"],
            v["p50_us"] / 1000, v["p99_us"] / 1000, (ticks / hz) * 1e6 / (r > 0 ? r : 1)
    }' >> "$CSV"
    tail -n 1 "$CSV"
}

echo "round,proxy,connections,requests,seconds,requests_per_s,non_2xx_or_3xx,p50_ms,p99_ms,cpu_us_per_request"
for round in $(seq 1 "$ROUNDS"); do
    for connections in $CONNECTIONS; do
        run "$round" nginx "$connections" "$NGINX_PORT" /load/pass-through "$PASS_LINES"
        [ -z "$floor" ] || run "$round" nio-floor "$connections" "$FLOOR_PORT" /load/pass-through "$PASS_LINES"
        start_gateway
        run "$round" samlgate-pass-through "$connections" "$GATEWAY_PORT" /load/pass-through "$PASS_LINES"
        stop_gateway
        start_gateway
        run "$round" samlgate-exchange "$connections" "$GATEWAY_PORT" /api/v1/tokens/authn 0
        stop_gateway
        if [ -n "${BASELINE_BIN:-}" ]; then
            start_gateway "$BASELINE_BIN"
            run "$round" baseline-pass-through "$connections" "$GATEWAY_PORT" /load/pass-through "$PASS_LINES"
            stop_gateway
            start_gateway "$BASELINE_BIN"
            run "$round" baseline-exchange "$connections" "$GATEWAY_PORT" /api/v1/tokens/authn 0
            stop_gateway
        fi
    done
done

# The table and the plots (matplotlib in the tools venv).
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -c 'import matplotlib' 2>/dev/null || "$VENV/bin/pip" install -q matplotlib
"$VENV/bin/python" scripts/load/compare_report.py "$CSV" "$DIR"
