#!/usr/bin/env bash
# make h2-unread: what HTTP/2 clients that never read their answers cost a reverse proxy in
# resident memory: samlgate, nginx and HAProxy in the same sitting, each with h2c (prior
# knowledge) on loopback in front of one backend (scripts/load/h2_unread.py backend: HTTP/1.1,
# keep-alive, GET /size/N answers N bytes). Per answer size, CONNECTIONS connections each open
# 100 GET streams with every stream's flow-control window at 0 (SETTINGS_INITIAL_WINDOW_SIZE 0,
# never a WINDOW_UPDATE): the proxy may take the answers from the backend but can pass none of
# them on. Once every request has reached the backend and the proxy's RSS has stopped growing
# (1 s, at most 10 s), its RSS (VmRSS summed over its processes: nginx's master and workers)
# minus the RSS just before the connections opened, per connection. Then the connections close
# and the proxy settles (scripts/load/h2_unread.py measure). A fresh proxy for every
# measurement, warmed up with a few ordinary requests, so no measurement reuses memory an
# earlier one left behind (allocators and HAProxy's pools keep what they freed). Rounds
# interleave the proxies (their order rotating per round), so drift of this machine hits all
# alike. Kernel memory (socket buffers, page cache) is no process's RSS: the answers left in the
# sockets between backend and proxy (/proc/net/tcp) and those nginx writes to its temporary
# files are counted apart ("in sockets", "on disk"). Prints two Markdown tables (MiB
# per connection, median and min-max over the rounds; what became of the answers and the
# connections), every measurement in $H2U_DIR/unread.csv.
# Knobs: CONNECTIONS (8), ROUNDS (3), SIZES (bytes, "1024 65536 1048576"), PEERS ("samlgate
# nginx haproxy"; one that cannot run is left out with a line to stderr), BIN
# (.build/release/samlgate), H2U_DIR (.run/h2-unread).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/load/common.sh
BIN=${BIN:-.build/release/samlgate}
DIR=$(fresh_dir "${H2U_DIR:-.run/h2-unread}")
CONNECTIONS=${CONNECTIONS:-8}
ROUNDS=${ROUNDS:-3}
SIZES=${SIZES:-"1024 65536 1048576"}
PEERS=${PEERS:-"samlgate nginx haproxy"}
MVPD=Cablevision
UNREAD=scripts/load/h2_unread.py

peers=()
for peer in $PEERS; do
    case "$peer" in
        samlgate)
            if [ -x "$BIN" ]; then peers+=(samlgate); else echo "$BIN is missing: samlgate is left out (make release)" >&2; fi ;;
        nginx) NGINX=$(optional_load_tool nginx); [ -z "$NGINX" ] || peers+=(nginx) ;;
        haproxy) HAPROXY=$(optional_load_tool haproxy); [ -z "$HAPROXY" ] || peers+=(haproxy) ;;
        *) echo "PEERS: unknown peer $peer (samlgate, nginx, haproxy)" >&2; exit 2 ;;
    esac
done
[ ${#peers[@]} -gt 0 ] || { echo "h2-unread: no proxy to measure" >&2; exit 1; }

BACKEND_PORT=$(free_port)
backend="" proxy=""
cleanup() {
    for pid in $proxy $backend; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

python3 "$UNREAD" backend "$BACKEND_PORT" 2>"$DIR/backend.log" &
backend=$!
wait_for "http://127.0.0.1:$BACKEND_PORT/stats"

# samlgate reads a trust store even when it only passes requests through.
if [[ " ${peers[*]} " == *" samlgate "* ]]; then
    "$BIN" idp keygen --out "$DIR/idp" >/dev/null
    mkdir -p "$DIR/trust/$MVPD"
    cp "$DIR/idp/cert.pem" "$DIR/trust/$MVPD/cert.pem"
fi

# start_proxy PROXY PORT: a fresh instance in front of the backend, in the foreground of this
# script (its pid in $proxy), its configuration and logs in $DIR/PROXY.
start_proxy() {
    local dir
    dir=$(fresh_dir "$DIR/$1")
    case "$1" in
        samlgate)
            "$BIN" serve --port "$2" --h2c --upstream "http://127.0.0.1:$BACKEND_PORT" --trust-store "$DIR/trust" \
                --throttle-pass-through off --log-level error --idle-timeout 300 --total-timeout 60 \
                >/dev/null 2>>"$dir/gateway.log" &
            ;;
        nginx)
            # As scripts/load/nginx.conf, with h2c on the listener and two workers (one per core here).
            cat > "$dir/nginx.conf" <<EOF
worker_processes 2;
pid $dir/nginx.pid;
error_log $dir/nginx-error.log warn;
daemon off;
master_process on;

events {
    worker_connections 4096;
}

http {
    access_log off;
    client_body_temp_path $dir/client-body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;

    upstream backend {
        server 127.0.0.1:$BACKEND_PORT;
        keepalive 256;
    }

    server {
        listen 127.0.0.1:$2 http2;
        location / {
            proxy_pass http://backend;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
EOF
            "$NGINX" -p "$dir" -c "$dir/nginx.conf" -e "$dir/nginx-error.log" &
            ;;
        haproxy)
            # As scripts/load/haproxy.cfg, with h2c on the listener (proto h2).
            cat > "$dir/haproxy.cfg" <<EOF
global
    nbthread $(nproc)
    maxconn 8192

defaults
    mode http
    maxconn 8192
    option http-keep-alive
    http-reuse always
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout http-request 10s
    timeout http-keep-alive 60s

frontend proxy
    bind 127.0.0.1:$2 proto h2
    default_backend upstream

backend upstream
    server upstream 127.0.0.1:$BACKEND_PORT
EOF
            "$HAPROXY" -db -f "$dir/haproxy.cfg" >/dev/null 2>>"$dir/haproxy.log" &
            ;;
    esac
    proxy=$!
}

# stop_proxy: TERM, and KILL after 10 s (samlgate drains open connections for up to total-timeout).
stop_proxy() {
    kill -TERM "$proxy" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$proxy" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$proxy" 2>/dev/null || true
    wait "$proxy" 2>/dev/null || true
    proxy=""
}

CSV="$DIR/unread.csv"
echo "round,proxy,size,$(python3 "$UNREAD" fields)" > "$CSV"
for round in $(seq 1 "$ROUNDS"); do
    # The proxies' order rotates from round to round.
    shift_by=$(( (round - 1) % ${#peers[@]} ))
    order=("${peers[@]:shift_by}" "${peers[@]:0:shift_by}")
    for size in $SIZES; do
        for name in "${order[@]}"; do
            port=$(free_port)
            start_proxy "$name" "$port"
            wait_for "http://127.0.0.1:$port/size/1" --http2-prior-knowledge
            for _ in 1 2 3; do curl -sS --http2-prior-knowledge -o /dev/null "http://127.0.0.1:$port/size/$size"; done
            row=$(python3 "$UNREAD" measure "$port" "$proxy" "$BACKEND_PORT" "$CONNECTIONS" "/size/$size")
            echo "$round,$name,$size,$row" >> "$CSV"
            echo "round $round, $name, $size bytes: $row" >&2
            stop_proxy
        done
    done
done
python3 "$UNREAD" report "$CSV"
