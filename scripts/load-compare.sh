#!/usr/bin/env bash
# make load-compare: what a proxied request costs samlgate next to plain reverse proxies, in one run.
# Two workloads: `form`, POSTs of ~11 KB form bodies to a path the reference upstream answers 404
# (the bodies of the v1 exchange, passed through), and `get204`, GETs that an nginx of its own
# answers 204 (scripts/load/nginx-204.conf): a proxy's cost with almost nothing to move. Each peer,
# in front of each workload's upstream (one instance per workload, on a port of its own): nginx
# (scripts/load/nginx.conf, the anchor), HAProxy (scripts/load/haproxy.cfg), Caddy
# (scripts/load/Caddyfile) and the NIO floor (Benchmarks/Drivers/NIOFloorProxy, a reverse proxy on
# the gateway's codecs that does nothing else, built here: what SwiftNIO and NIOHTTP1 cost per
# request, so the gap between it and samlgate is the gateway's own work). Every peer keeps
# keep-alive connections to the upstream, logs nothing per request and runs a worker or thread per
# core. The gateway is started afresh for each of its runs, in front of the same upstream as the
# peers (an empty replay cache: no response is a replay, and no run inherits another's warm-up).
# Interleaved rounds: for each connection count and workload, every peer, samlgate pass-through
# and (form only) samlgate v1 exchange, one after the other, so drift of this machine hits all
# alike. CPU per request is the proxy's own (user + system, all its processes and threads).
# Prints one table per workload (median over rounds), writes every run to $DIR/compare.csv and the
# plots (throughput, p99 and proxy CPU per request against connections) to
# $DIR/{throughput,p99,cpu}-WORKLOAD.png.
# Knobs: ROUNDS (3), DURATION (s per run, 5), CONNECTIONS ("1 16 64 256"), WORKLOADS ("form
# get204"), PEERS ("nginx haproxy caddy floor": the peers that run; one not installed is left out
# with a line to stderr; nginx must be installed all the same, it serves get204), WORKERS
# (gateway), BASELINE_BIN (another samlgate build, e.g. the previous one: its pass-through and
# exchange are measured in the same rounds, labelled "baseline"), GATEWAY_ARGS (more `serve` flags
# for this build only, e.g. "--mode report-only": what a setting costs, against the baseline),
# BASELINE_ARGS (more `serve` flags for the baseline build only: the same setting on both builds;
# in either, @SINK@ is the URL of an nginx that answers 204 to anything, e.g. a span sink:
# "--tracing-endpoint @SINK@/v1/traces --tracing-sample-ratio 1"),
# FLOOR (0 leaves out the NIO floor, as PEERS without `floor` does).
set -euo pipefail
BIN=${BIN:-.build/release/samlgate}
DIR=${LOAD_DIR:-.run/load}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
CONNECTIONS=${CONNECTIONS:-"1 16 64 256"}
WORKLOADS=${WORKLOADS:-"form get204"}
PEERS=${PEERS:-"nginx haproxy caddy floor"}
MVPD=Cablevision
VENV=.build/tools-venv
PASS_LINES=4000

. scripts/load/common.sh
require_load_tools nginx
. scripts/load/mint.sh

for workload in $WORKLOADS; do
    case "$workload" in
        form | get204) ;;
        *) echo "WORKLOADS: unknown workload $workload (form, get204)" >&2; exit 2 ;;
    esac
done
# The peers that run, by the name their rows carry.
peers=()
for peer in $PEERS; do
    case "$peer" in
        nginx) peers+=(nginx) ;;
        haproxy) HAPROXY=$(optional_load_tool haproxy); [ -z "$HAPROXY" ] || peers+=(haproxy) ;;
        caddy) CADDY=$(optional_load_tool caddy); [ -z "$CADDY" ] || peers+=(caddy) ;;
        floor) [ "${FLOOR:-1}" = 0 ] || peers+=(nio-floor) ;;
        *) echo "PEERS: unknown peer $peer (nginx, haproxy, caddy, floor)" >&2; exit 2 ;;
    esac
done
floor_bin=""
if [[ " ${peers[*]} " == *" nio-floor "* ]]; then
    (cd Benchmarks && swift build -c release --product NIOFloorProxy >/dev/null) \
        || { echo "building Benchmarks' NIOFloorProxy failed (PEERS without floor runs without it)" >&2; exit 1; }
    floor_bin=Benchmarks/.build/release/NIOFloorProxy
fi
# An exchange run sees at most ~10k verifications/s on this class of machine. Without the form
# workload only the trust store is needed.
case " $WORKLOADS " in
    *" form "*) mint_responses "${RESPONSES:-$(( DURATION * 10000 ))}" ;;
    *) mint_responses 1 ;;
esac

# Each workload's upstream: the reference upstream (form, and the exchange), nginx answering 204.
declare -A upstream_of=([form]=$(free_port) [get204]=$(free_port))
# Each workload's path, on every proxy.
declare -A path_of=([form]=/load/pass-through [get204]=/load/get204)
GATEWAY_PORT=$(free_port)
# Peer instances by "proxy/workload": their port and the pid started.
declare -A port_of pid_of

pids=()
gateway=""
cleanup() {
    if [ -n "$gateway" ]; then kill -TERM "$gateway" 2>/dev/null || true; fi
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

# fill TEMPLATE PREFIX PORT [UPSTREAM_PORT]: a configuration from scripts/load/.
fill() {
    sed -e "s#@PREFIX@#$2#g" -e "s#@PORT@#$3#g" -e "s#@UPSTREAM_PORT@#${4:-}#g" -e "s#@THREADS@#$(nproc)#g" "$1"
}

"$BIN" upstream --port "${upstream_of[form]}" --log-level error >/dev/null 2>&1 &
pids+=($!)
wait_for "http://127.0.0.1:${upstream_of[form]}/"
# The nginx answering 204 also serves as the span sink of tracing runs (@SINK@ in the ARGS).
if [[ " $WORKLOADS " == *" get204 "* || "${GATEWAY_ARGS:-}${BASELINE_ARGS:-}" == *@SINK@* ]]; then
    dir=$(fresh_dir "$DIR/upstream-204")
    fill scripts/load/nginx-204.conf "$dir" "${upstream_of[get204]}" > "$dir/nginx.conf"
    "$NGINX" -p "$dir" -c "$dir/nginx.conf" -e "$dir/nginx-error.log" &
    pids+=($!)
    wait_for "http://127.0.0.1:${upstream_of[get204]}/"
fi

# start_peer PROXY WORKLOAD: an instance of the peer in front of the workload's upstream.
start_peer() {
    local proxy=$1 workload=$2 port dir upstream=${upstream_of[$2]}
    port=$(free_port)
    dir=$(fresh_dir "$DIR/$proxy-$workload")
    case "$proxy" in
        nginx)
            fill scripts/load/nginx.conf "$dir" "$port" "$upstream" > "$dir/nginx.conf"
            "$NGINX" -p "$dir" -c "$dir/nginx.conf" -e "$dir/nginx-error.log" &
            ;;
        haproxy)
            fill scripts/load/haproxy.cfg "$dir" "$port" "$upstream" > "$dir/haproxy.cfg"
            "$HAPROXY" -db -f "$dir/haproxy.cfg" >/dev/null 2>>"$dir/haproxy.log" &
            ;;
        caddy)
            # Its data and its copy of the configuration in its own directory, not in $HOME.
            fill scripts/load/Caddyfile "$dir" "$port" "$upstream" > "$dir/Caddyfile"
            XDG_DATA_HOME=$dir XDG_CONFIG_HOME=$dir "$CADDY" run --config "$dir/Caddyfile" --adapter caddyfile \
                >/dev/null 2>>"$dir/caddy.log" &
            ;;
        nio-floor)
            # As many event loops as the gateway runs by default: the CPUs this process may use.
            "$floor_bin" --port "$port" --upstream-port "$upstream" --threads "$(nproc)" >/dev/null 2>>"$dir/floor.log" &
            ;;
    esac
    pid_of[$proxy/$workload]=$!
    port_of[$proxy/$workload]=$port
    pids+=($!)
    wait_for "http://127.0.0.1:$port${path_of[$workload]}"
}
for workload in $WORKLOADS; do
    for proxy in "${peers[@]}"; do start_peer "$proxy" "$workload"; done
done

# start_gateway WORKLOAD [BINARY]: this build (with GATEWAY_ARGS) when none is named, else BINARY
# (with BASELINE_ARGS), in front of the workload's upstream.
start_gateway() {
    local extra=""
    if [ -n "${2:-}" ]; then extra=${BASELINE_ARGS:-}; else extra=${GATEWAY_ARGS:-}; fi
    extra=${extra//@SINK@/http://127.0.0.1:${upstream_of[get204]}}
    # shellcheck disable=SC2086,SC2046
    "${2:-$BIN}" serve --port "$GATEWAY_PORT" --upstream "http://127.0.0.1:${upstream_of[$1]}" --trust-store "$DIR/trust" \
        --log-level warning ${WORKERS:+--workers "$WORKERS"} $(throttle_args "${2:-$BIN}") $extra >/dev/null 2>>"$DIR/gateway.log" &
    gateway=$!
    wait_for "http://127.0.0.1:$GATEWAY_PORT/readyz"
}
stop_gateway() { kill -TERM "$gateway" 2>/dev/null || true; wait "$gateway" 2>/dev/null || true; gateway=""; }

# proxy_pids PROXY WORKLOAD: the processes whose CPU a run counts: nginx's master and workers,
# HAProxy's or Caddy's one process (all its threads), the NIO floor's, or the gateway's.
proxy_pids() {
    local pid=${pid_of[$1/$2]:-}
    case "$1" in
        nginx) echo "$pid $(pgrep -P "$pid" | tr '\n' ' ')" ;;
        haproxy | caddy | nio-floor) echo "$pid" ;;
        *) echo "$gateway" ;;
    esac
}

CSV="$DIR/compare.csv"
HEADER="round,workload,proxy,connections,requests,seconds,requests_per_s,non_2xx_or_3xx,p50_ms,p99_ms,cpu_us_per_request"
echo "$HEADER" > "$CSV"

# run ROUND WORKLOAD PROXY CONNECTIONS PORT [PATH LINES]: one wrk run of the workload (form: the
# form bodies, the first LINES of them, 0 for all, to PATH; get204: GETs) through the proxy on PORT.
run() {
    local round=$1 workload=$2 proxy=$3 connections=$4 port=$5 path=${6:-${path_of[$2]}} lines=${7:-$PASS_LINES}
    local pids_now before after line load
    load=(-s scripts/load/get.lua "http://127.0.0.1:$port$path")
    [ "$workload" != form ] \
        || load=(-s scripts/load/exchange.lua "http://127.0.0.1:$port" -- "$DIR/responses.txt" "$MVPD" 1 "$path" "$lines")
    pids_now=$(proxy_pids "$proxy" "$workload")
    # shellcheck disable=SC2086
    before=$(ticks_of $pids_now)
    wrk -t1 -c"$connections" -d"${DURATION}s" --latency "${load[@]}" > "$DIR/wrk.out" 2>&1
    # shellcheck disable=SC2086
    after=$(ticks_of $pids_now)
    line=$(grep '^LOAD ' "$DIR/wrk.out") || { cat "$DIR/wrk.out" >&2; return 1; }
    awk -v line="$line" -v round="$round" -v workload="$workload" -v proxy="$proxy" -v c="$connections" \
        -v ticks=$((after - before)) -v hz="$HZ" 'BEGIN {
        n = split(line, f, /[ =]/); for (i = 2; i < n; i += 2) v[f[i]] = f[i + 1]
        secs = v["duration_us"] / 1e6; r = v["requests"]
        printf "%d,%s,%s,%d,%d,%.3f,%.0f,%d,%.3f,%.3f,%.1f\n", round, workload, proxy, c, r, secs, r / secs,
            v["errors_status"], v["p50_us"] / 1000, v["p99_us"] / 1000, (ticks / hz) * 1e6 / (r > 0 ? r : 1)
    }' >> "$CSV"
    tail -n 1 "$CSV"
}

echo "$HEADER"
for round in $(seq 1 "$ROUNDS"); do
    for connections in $CONNECTIONS; do
        for workload in $WORKLOADS; do
            for proxy in "${peers[@]}"; do
                run "$round" "$workload" "$proxy" "$connections" "${port_of[$proxy/$workload]}"
            done
            for build in samlgate ${BASELINE_BIN:+baseline}; do
                binary=""
                [ "$build" = samlgate ] || binary=$BASELINE_BIN
                start_gateway "$workload" "$binary"
                run "$round" "$workload" "$build-pass-through" "$connections" "$GATEWAY_PORT"
                stop_gateway
                [ "$workload" = form ] || continue
                start_gateway "$workload" "$binary"
                run "$round" "$workload" "$build-exchange" "$connections" "$GATEWAY_PORT" /api/v1/tokens/authn 0
                stop_gateway
            done
        done
    done
done

# The tables and the plots (matplotlib in the tools venv).
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -c 'import matplotlib' 2>/dev/null || "$VENV/bin/pip" install -q matplotlib
"$VENV/bin/python" scripts/load/compare_report.py "$CSV" "$DIR"
