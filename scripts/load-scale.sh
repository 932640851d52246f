#!/usr/bin/env bash
# make load-scale: how nginx and the gateway scale with the cores they are given. For K = 1, 2,
# 4 … (while a core is left for the load: wrk and the reference upstream run on the others), nginx
# (K workers) and the gateway (its threads at their defaults, which follow the CPUs it may use)
# are pinned with taskset to cores 0…K-1, and measured in interleaved rounds: nginx pass-through,
# samlgate pass-through, samlgate v1 exchange (and BASELINE_BIN's two, when given). Writes every
# run to $DIR/scale.csv, prints the medians and plots requests/s and CPU per request against K
# ($DIR/scale.png).
# Knobs: ROUNDS (3), DURATION (s per run, 5), CONNECTIONS (64), BASELINE_BIN.
set -euo pipefail
BIN=${BIN:-.build/release/samlgate}
DIR=${LOAD_DIR:-.run/load}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
CONNECTIONS=${CONNECTIONS:-64}
MVPD=Cablevision
VENV=.build/tools-venv
PASS_LINES=4000

CPUS=$(nproc)
[ "$CPUS" -ge 2 ] || { echo "load-scale needs at least 2 CPUs (one for the proxy, one for the load)" >&2; exit 1; }
mkdir -p "$DIR"
. scripts/load/common.sh
require_load_tools nginx
. scripts/load/mint.sh
mint_responses "${RESPONSES:-$(( DURATION * 10000 ))}"

UPSTREAM_PORT=$(free_port)
NGINX_PORT=$(free_port)
GATEWAY_PORT=$(free_port)
NGINX_DIR=$(fresh_dir "$DIR/nginx-scale")

upstream=""
nginx_master=""
gateway=""
cleanup() {
    [ -n "$gateway" ] && kill -TERM "$gateway" 2>/dev/null || true
    [ -n "$nginx_master" ] && kill -TERM "$nginx_master" 2>/dev/null || true
    [ -n "$upstream" ] && kill -TERM "$upstream" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

# Core counts to measure: powers of two below the machine's count, and all but one core.
ks=()
for (( k = 1; k < CPUS; k *= 2 )); do ks+=("$k"); done
[ "${ks[-1]}" -eq $(( CPUS - 1 )) ] || ks+=($(( CPUS - 1 )))

start_nginx() { # K
    sed -e "s#@PREFIX@#$NGINX_DIR#g" -e "s#@PORT@#$NGINX_PORT#g" -e "s#@UPSTREAM_PORT@#$UPSTREAM_PORT#g" \
        -e "s#^worker_processes auto;#worker_processes $1;#" scripts/load/nginx.conf > "$NGINX_DIR/nginx.conf"
    taskset -c "0-$(( $1 - 1 ))" "$NGINX" -p "$NGINX_DIR" -c "$NGINX_DIR/nginx.conf" -e "$NGINX_DIR/nginx-error.log" &
    nginx_master=$!
    wait_for "http://127.0.0.1:$NGINX_PORT/"
}
stop_nginx() { kill -TERM "$nginx_master" 2>/dev/null || true; wait "$nginx_master" 2>/dev/null || true; nginx_master=""; }
start_gateway() { # K BINARY
    taskset -c "0-$(( $1 - 1 ))" "$2" serve --port "$GATEWAY_PORT" --upstream "http://127.0.0.1:$UPSTREAM_PORT" \
        --trust-store "$DIR/trust" --log-level warning $(throttle_args "$2") >/dev/null 2>>"$DIR/gateway.log" &
    gateway=$!
    wait_for "http://127.0.0.1:$GATEWAY_PORT/readyz"
}
stop_gateway() { kill -TERM "$gateway" 2>/dev/null || true; wait "$gateway" 2>/dev/null || true; gateway=""; }

CSV="$DIR/scale.csv"
echo "round,k,proxy,requests,seconds,requests_per_s,p50_ms,p99_ms,cpu_us_per_request" > "$CSV"

# run ROUND K PROXY PORT PATH LINES PIDS…: wrk on the cores left over, CPU of PIDS counted.
run() {
    local round=$1 k=$2 proxy=$3 port=$4 path=$5 lines=$6 before after line
    shift 6
    before=$(ticks_of "$@")
    taskset -c "$k-$(( CPUS - 1 ))" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s scripts/load/exchange.lua \
        "http://127.0.0.1:$port" -- "$DIR/responses.txt" "$MVPD" 1 "$path" "$lines" > "$DIR/wrk.out" 2>&1
    after=$(ticks_of "$@")
    line=$(grep '^LOAD ' "$DIR/wrk.out") || { cat "$DIR/wrk.out" >&2; return 1; }
    awk -v line="$line" -v round="$round" -v k="$k" -v proxy="$proxy" -v ticks=$((after - before)) -v hz="$HZ" 'BEGIN {
        n = split(line, f, /[ =]/); for (i = 2; i < n; i += 2) v[f[i]] = f[i + 1]
        secs = v["duration_us"] / 1e6; r = v["requests"]
        printf "%d,%d,%s,%d,%.3f,%.0f,%.3f,%.3f,%.1f\n", round, k, proxy, r, secs, r / secs,
            v["p50_us"] / 1000, v["p99_us"] / 1000, (ticks / hz) * 1e6 / (r > 0 ? r : 1)
    }' | tee -a "$CSV"
}

# gateway_runs ROUND K NAME BINARY
gateway_runs() {
    start_gateway "$2" "$4"
    run "$1" "$2" "$3-pass-through" "$GATEWAY_PORT" /load/pass-through "$PASS_LINES" "$gateway"
    stop_gateway
    start_gateway "$2" "$4"
    run "$1" "$2" "$3-exchange" "$GATEWAY_PORT" /api/v1/tokens/authn 0 "$gateway"
    stop_gateway
}

echo "cores for the proxies: ${ks[*]} (of $CPUS; the load runs on the rest)"
echo "round,k,proxy,requests,seconds,requests_per_s,p50_ms,p99_ms,cpu_us_per_request"
for round in $(seq 1 "$ROUNDS"); do
    for k in "${ks[@]}"; do
        # The upstream on the load's cores, restarted with them.
        [ -n "$upstream" ] && { kill -TERM "$upstream"; wait "$upstream" 2>/dev/null || true; }
        taskset -c "$k-$(( CPUS - 1 ))" "$BIN" upstream --port "$UPSTREAM_PORT" --log-level error >/dev/null 2>&1 &
        upstream=$!
        wait_for "http://127.0.0.1:$UPSTREAM_PORT/"
        start_nginx "$k"
        # shellcheck disable=SC2046
        run "$round" "$k" nginx "$NGINX_PORT" /load/pass-through "$PASS_LINES" "$nginx_master" $(pgrep -P "$nginx_master")
        stop_nginx
        gateway_runs "$round" "$k" samlgate "$BIN"
        if [ -n "${BASELINE_BIN:-}" ]; then gateway_runs "$round" "$k" baseline "$BASELINE_BIN"; fi
    done
done

[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -c 'import matplotlib' 2>/dev/null || "$VENV/bin/pip" install -q matplotlib
"$VENV/bin/python" scripts/load/scale_report.py "$CSV" "$DIR"
