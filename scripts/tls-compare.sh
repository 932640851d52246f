#!/usr/bin/env bash
# make tls-compare: TLS and HTTP/2 to clients, samlgate against nginx with the same certificate
# (ECDSA P-256) and the same profile (scripts/load/nginx-tls.conf), both passing GETs to an nginx
# answering 204 (scripts/load/nginx-204.conf), in interleaved rounds:
#   h1-kept    wrk, HTTP/1.1 over TLS, 16 kept-alive connections       CPU per request
#   h2-kept    h2load, HTTP/2, 16 connections x 16 streams              CPU per request
#   h1-new     h2load --h1, HANDSHAKES connections of one request each  handshakes per CPU second
#   h2-new     h2load, HTTP/2, the same                                 handshakes per CPU second
#   h1-full1   openssl s_time -new, one client, connections in a row    handshakes per CPU second
#   h1-resumed openssl s_time -reuse, the same, resuming one session    handshakes per CPU second
#   x1-kept    v1 exchanges over HTTP/1.1, 16 kept-alive connections    CPU per exchange
#   x2-kept    v1 exchanges over HTTP/2, one connection x 16 streams    CPU per exchange
# The exchanges (samlgate and baseline only: the others cannot verify) each carry a signed
# response of their own (scripts/load/mint.sh; a replayed one would be refused), EXCHANGES per
# run, posted by scripts/load/exchange_client.py (httpx) with the CA's trust.
# CPU is the proxy's own (user + system from /proc: nginx's master and workers, the gateway's
# process), not the clients' nor the upstream's. Beside them the NIO floor
# (Benchmarks/Drivers/NIOFloorProxy with the same certificate: swift-nio-ssl, swift-nio-http2 with
# a child channel per stream, pooled upstream connections, nothing else), so that what the
# libraries cost and what samlgate adds are told apart; and `floor-conn`, the same floor with the
# HTTP/2 streams handled at the connection (no child channel, no codec per stream). And HAProxy
# 2.6 and Caddy 2.6 with the same certificate (scripts/load/haproxy-tls.cfg, Caddyfile-tls), when
# installed. In h1-new and h2-new every connection is a full TLS 1.3 handshake (X25519, ECDSA):
# h2load's clients resume no session. h1-full1 and h1-resumed tell what resumption saves: for
# DURATION one client (openssl s_time) opens connections one after the other, each with one
# HTTP/1.0 GET, in h1-full1 each a full handshake, in h1-resumed each resuming by its TLS 1.3
# ticket the session of the client's first connection (psk_dhe_ke: a fresh X25519 exchange, no
# certificate nor signature; that first full handshake is in the CPU, not in the count). All of
# them resume: nginx (tickets on in nginx-tls.conf), HAProxy and Caddy by their defaults, the
# gateway and the floors by swift-nio-ssl's (BoringSSL's); a run in which s_time reports a
# connection not resumed fails. Prints each run, then medians and spread.
# Knobs: BIN (.build/release/samlgate), BASELINE_BIN (another build, measured alongside as
# `baseline`), WORKLOADS (the ones above that run, all by default), FLOOR (0 leaves the floors
# out), PEERS ("haproxy caddy": the other proxies that run; one not installed is left out),
# ROUNDS (3), DURATION (5 s), HANDSHAKES (1000), EXCHANGES (3000), TLS_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/load/common.sh
require_load_tools nginx
command -v h2load >/dev/null || { echo "tls-compare: h2load is not installed (make deps installs nghttp2-client)" >&2; exit 1; }
BIN=${BIN:-.build/release/samlgate}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
HANDSHAKES=${HANDSHAKES:-1000}
EXCHANGES=${EXCHANGES:-3000}
WORKLOADS=${WORKLOADS:-h1-kept h2-kept h1-new h2-new h1-full1 h1-resumed x1-kept x2-kept}
DIR=$(fresh_dir "${TLS_DIR:-.run/tls-compare}")
MVPD=Cablevision
[ -x "$BIN" ] || { echo "tls-compare: $BIN is missing (make release)" >&2; exit 1; }
floor_bin=""
if [ "${FLOOR:-1}" != 0 ]; then
    (cd Benchmarks && swift build -c release --product NIOFloorProxy >/dev/null) \
        || { echo "tls-compare: building Benchmarks' NIOFloorProxy failed (FLOOR=0 runs without it)" >&2; exit 1; }
    floor_bin=Benchmarks/.build/release/NIOFloorProxy
fi

pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM
fill() {
    sed -e "s#@PREFIX@#$2#g" -e "s#@PORT@#$3#g" -e "s#@UPSTREAM_PORT@#${4:-}#g" -e "s#@THREADS@#$(nproc)#g" "$1"
}

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$DIR/ca.key" -out "$DIR/ca.pem" -days 2 \
    -subj "/CN=tls-compare CA" >/dev/null 2>&1
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$DIR/server.key" -out "$DIR/server.csr" -subj /CN=localhost \
    >/dev/null 2>&1
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$DIR/server.ext"
openssl x509 -req -in "$DIR/server.csr" -CA "$DIR/ca.pem" -CAkey "$DIR/ca.key" -CAcreateserial -days 2 -extfile "$DIR/server.ext" \
    -out "$DIR/server.pem" >/dev/null 2>&1
"$BIN" idp keygen --out "$DIR/idp" >/dev/null
mkdir -p "$DIR/trust/$MVPD"
cp "$DIR/idp/cert.pem" "$DIR/trust/$MVPD/cert.pem"

declare -A exchanged=([samlgate]=0 [baseline]=0)
if [[ $WORKLOADS == *x* ]]; then
    . scripts/load/mint.sh
    . scripts/tools-venv.sh
    tools_venv tls-compare h2=h2 httpx=httpx
    # Each gateway takes each response once: ROUNDS x the two exchange workloads.
    mint_responses $((ROUNDS * 2 * EXCHANGES))
fi

SINK_PORT=$(free_port) NGINX_PORT=$(free_port) GATEWAY_PORT=$(free_port) BASELINE_PORT=$(free_port) FLOOR_PORT=$(free_port) FLOOR_CONN_PORT=$(free_port)
HAPROXY_PORT=$(free_port) CADDY_PORT=$(free_port)
proxies="nginx samlgate"
mkdir -p "$DIR/sink" "$DIR/nginx"
fill scripts/load/nginx-204.conf "$DIR/sink" "$SINK_PORT" > "$DIR/sink/nginx.conf"
"$NGINX" -p "$DIR/sink" -c "$DIR/sink/nginx.conf" -e "$DIR/sink/nginx-error.log" &
pids+=($!)
cp "$DIR/server.pem" "$DIR/server.key" "$DIR/nginx/"
fill scripts/load/nginx-tls.conf "$DIR/nginx" "$NGINX_PORT" "$SINK_PORT" > "$DIR/nginx/nginx.conf"
"$NGINX" -p "$DIR/nginx" -c "$DIR/nginx/nginx.conf" -e "$DIR/nginx/nginx-error.log" &
nginx_pid=$!
pids+=("$nginx_pid")
# shellcheck disable=SC2046
"$BIN" serve --port "$GATEWAY_PORT" --upstream "http://127.0.0.1:$SINK_PORT" --trust-store "$DIR/trust" --log-level warning \
    --tls-certificate "$DIR/server.pem" --tls-key "$DIR/server.key" --tls-poll 0 $(throttle_args "$BIN") >/dev/null 2>"$DIR/gateway.log" &
gateway_pid=$!
pids+=("$gateway_pid")
baseline_pid=""
if [ -n "${BASELINE_BIN:-}" ]; then
    # shellcheck disable=SC2046
    "$BASELINE_BIN" serve --port "$BASELINE_PORT" --upstream "http://127.0.0.1:$SINK_PORT" --trust-store "$DIR/trust" \
        --log-level warning --tls-certificate "$DIR/server.pem" --tls-key "$DIR/server.key" --tls-poll 0 \
        $(throttle_args "$BASELINE_BIN") >/dev/null 2>"$DIR/baseline.log" &
    baseline_pid=$!
    pids+=("$baseline_pid")
    proxies="nginx samlgate baseline"
fi
floor_pid=""
if [ -n "$floor_bin" ]; then
    "$floor_bin" --port "$FLOOR_PORT" --upstream-port "$SINK_PORT" --threads "$(nproc)" \
        --tls-certificate "$DIR/server.pem" --tls-key "$DIR/server.key" >/dev/null 2>"$DIR/floor.log" &
    floor_pid=$!
    "$floor_bin" --port "$FLOOR_CONN_PORT" --upstream-port "$SINK_PORT" --threads "$(nproc)" \
        --tls-certificate "$DIR/server.pem" --tls-key "$DIR/server.key" --h2-at-connection >/dev/null 2>"$DIR/floor-conn.log" &
    floor_conn_pid=$!
    pids+=("$floor_pid" "$floor_conn_pid")
    proxies="$proxies floor floor-conn"
fi
haproxy_pid="" caddy_pid=""
for peer in ${PEERS:-haproxy caddy}; do
    case $peer in
        haproxy)
            HAPROXY=$(optional_load_tool haproxy)
            [ -n "$HAPROXY" ] || continue
            mkdir -p "$DIR/haproxy"
            cat "$DIR/server.pem" "$DIR/server.key" >"$DIR/haproxy/haproxy.pem"
            fill scripts/load/haproxy-tls.cfg "$DIR/haproxy" "$HAPROXY_PORT" "$SINK_PORT" >"$DIR/haproxy/haproxy.cfg"
            "$HAPROXY" -db -f "$DIR/haproxy/haproxy.cfg" >/dev/null 2>"$DIR/haproxy/haproxy.log" &
            haproxy_pid=$!
            pids+=("$haproxy_pid")
            proxies="$proxies haproxy" ;;
        caddy)
            CADDY=$(optional_load_tool caddy)
            [ -n "$CADDY" ] || continue
            mkdir -p "$DIR/caddy"
            cp "$DIR/server.pem" "$DIR/server.key" "$DIR/caddy/"
            fill scripts/load/Caddyfile-tls "$DIR/caddy" "$CADDY_PORT" "$SINK_PORT" >"$DIR/caddy/Caddyfile"
            # Its data and its copy of the configuration in its own directory, not in $HOME.
            XDG_DATA_HOME=$DIR/caddy XDG_CONFIG_HOME=$DIR/caddy "$CADDY" run --config "$DIR/caddy/Caddyfile" --adapter caddyfile \
                >/dev/null 2>"$DIR/caddy/caddy.log" &
            caddy_pid=$!
            pids+=("$caddy_pid")
            proxies="$proxies caddy" ;;
        *) echo "PEERS: unknown peer $peer (haproxy, caddy)" >&2; exit 2 ;;
    esac
done
wait_for "http://127.0.0.1:$SINK_PORT/"
for port in "$NGINX_PORT" "$GATEWAY_PORT" ${baseline_pid:+"$BASELINE_PORT"} ${floor_pid:+"$FLOOR_PORT" "$FLOOR_CONN_PORT"} \
    ${haproxy_pid:+"$HAPROXY_PORT"} ${caddy_pid:+"$CADDY_PORT"}; do
    for _ in $(seq 1 100); do curl -s -o /dev/null --cacert "$DIR/ca.pem" "https://localhost:$port/" && break; sleep 0.1; done
done

proxy_pids() { # name
    case $1 in
        nginx) echo "$nginx_pid $(pgrep -P "$nginx_pid" | tr '\n' ' ')" ;;
        samlgate) echo "$gateway_pid" ;;
        baseline) echo "$baseline_pid" ;;
        floor) echo "$floor_pid" ;;
        floor-conn) echo "$floor_conn_pid" ;;
        haproxy) echo "$haproxy_pid" ;;
        caddy) echo "$caddy_pid" ;;
    esac
}
port_of() {
    case $1 in
        nginx) echo "$NGINX_PORT" ;;
        samlgate) echo "$GATEWAY_PORT" ;;
        baseline) echo "$BASELINE_PORT" ;;
        floor) echo "$FLOOR_PORT" ;;
        floor-conn) echo "$FLOOR_CONN_PORT" ;;
        haproxy) echo "$HAPROXY_PORT" ;;
        caddy) echo "$CADDY_PORT" ;;
    esac
}

# run PROXY WORKLOAD: prints "PROXY WORKLOAD REQUESTS TICKS".
run() {
    local proxy=$1 workload=$2 url out before after requests www mode reused
    url="https://127.0.0.1:$(port_of "$proxy")/api/v1/config/REF"
    # shellcheck disable=SC2046
    before=$(ticks_of $(proxy_pids "$proxy"))
    case $workload in
        h1-kept)
            out=$(wrk -t1 -c16 -d"${DURATION}s" "$url")
            requests=$(awk '/requests in/ {print $1}' <<<"$out") ;;
        h2-kept)
            out=$(h2load -c16 -m16 -D "$DURATION" "$url")
            requests=$(awk '/^requests:/ {print $8}' <<<"$out") ;;
        h1-new)
            out=$(h2load --h1 -n "$HANDSHAKES" -c "$HANDSHAKES" "$url")
            requests=$(awk '/^requests:/ {print $8}' <<<"$out") ;;
        h2-new)
            out=$(h2load -n "$HANDSHAKES" -c "$HANDSHAKES" "$url")
            requests=$(awk '/^requests:/ {print $8}' <<<"$out") ;;
        h1-full1 | h1-resumed)
            # s_time sends "GET WWW HTTP/1.0" and no header, and nginx would pass the missing Host
            # on empty (the upstream answers 400): WWW carries a Host, then a User-Agent that
            # takes the trailing " HTTP/1.0".
            www=$'/api/v1/config/REF HTTP/1.0\r\nHost: 127.0.0.1:'"$(port_of "$proxy")"$'\r\nUser-Agent: openssl-s_time'
            mode=-new
            [ "$workload" = h1-full1 ] || mode=-reuse
            out=$(openssl s_time -connect "127.0.0.1:$(port_of "$proxy")" -www "$www" "$mode" -time "$DURATION")
            # "N connections in T real seconds, ..." after each mode s_time runs (here one).
            requests=$(awk '/ connections in .* real seconds/ {n = $1} END {print n}' <<<"$out")
            if [ "$workload" = h1-resumed ]; then
                # After "starting", one character per connection: r when the session was resumed.
                reused=$(awk '/^starting$/ {getline; print gsub(/r/, "")}' <<<"$out")
                [ "$reused" = "$requests" ] \
                    || { echo "tls-compare: h1-resumed: $proxy resumed ${reused:-0} of ${requests:-0} connections" >&2; exit 1; }
            fi ;;
        x1-kept | x2-kept)
            local protocol=h${workload:1:1}
            out=$("$TOOLS_PYTHON" scripts/load/exchange_client.py "https://localhost:$(port_of "$proxy")/api/v1/tokens/authn" \
                "$DIR/ca.pem" "$DIR/responses.txt" "${exchanged[$proxy]}" "$EXCHANGES" "$MVPD" "$protocol" 16)
            exchanged[$proxy]=$((${exchanged[$proxy]} + EXCHANGES))
            requests=$(awk '/^requests:/ {print $2}' <<<"$out") ;;
    esac
    # shellcheck disable=SC2046
    after=$(ticks_of $(proxy_pids "$proxy"))
    echo "$proxy $workload $requests $((after - before))"
}

echo "tls-compare: $ROUNDS rounds of ${DURATION}s (kept, full1, resumed) / $HANDSHAKES connections (new), $proxies alternated; HZ=$HZ"
: >"$DIR/runs.txt"
for round in $(seq 1 "$ROUNDS"); do
    for workload in $WORKLOADS; do
        for proxy in $proxies; do
            [[ $workload != x* || $proxy == samlgate || $proxy == baseline ]] || continue
            # Not in a subshell: the exchanges count the responses each gateway has used.
            run "$proxy" "$workload" >"$DIR/line"
            line=$(<"$DIR/line")
            echo "round $round: $line"
            echo "$round $line" >>"$DIR/runs.txt"
        done
    done
done

python3 - "$DIR/runs.txt" "$HZ" <<'PY'
import statistics, sys
runs, hz = {}, int(sys.argv[2])
for line in open(sys.argv[1]):
    round_, proxy, workload, requests, ticks = line.split()
    runs.setdefault((workload, proxy), []).append((int(requests), int(ticks) / hz))
print()
print("| workload | proxy | per request or exchange (kept) or per handshake (new, full1, resumed), µs CPU: median (min–max) | handshakes per CPU second | runs |")
print("|---|---|---:|---:|---:|")
handshakes = {"h1-new", "h2-new", "h1-full1", "h1-resumed"}
for workload in ["h1-kept", "h2-kept", "h1-new", "h2-new", "h1-full1", "h1-resumed", "x1-kept", "x2-kept"]:
    for proxy in ["nginx", "haproxy", "caddy", "floor", "floor-conn", "samlgate", "baseline"]:
        samples = runs.get((workload, proxy), [])
        per = [cpu / n * 1e6 for n, cpu in samples if n]
        if not per:
            continue
        rate = f"{statistics.median(n / cpu for n, cpu in samples if cpu):,.0f}" if workload in handshakes else ""
        print(f"| {workload} | {proxy} | {statistics.median(per):.1f} ({min(per):.1f}–{max(per):.1f}) | {rate} | {len(per)} |")
PY
