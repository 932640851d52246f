#!/usr/bin/env bash
# make http-diff: an external HTTP/1.1 differential check, samlgate against nginx.
# A byte-logging backend (scripts/load/http_diff.py backend: every request it reads, as read, in
# $DIR/backend.jsonl) listens on two loopback ports: nginx, as a plain reverse proxy (HTTP/1.1 and
# keep-alive to the upstream, nginx's default header handling), is in front of one, the gateway
# (its pass-through routes) in front of the other. ~295 hand-written odd or malformed requests go
# over raw sockets to both at once (scripts/load/http_diff.py run); for each, the statuses, and what
# reached the backend through each proxy, normalized. Printed: the differences that matter for
# security — samlgate stricter (it refused what nginx forwarded), samlgate laxer (the reverse, or
# more requests reached the backend through it), content differs (another target, end-to-end header
# values, body or trailers; or bytes the client never sent) — and a summary line. Every case in
# $DIR/results.jsonl. Exit status 0 whatever the differences; non-zero only when the run failed.
# Knobs: BIN (.build/release/samlgate), ONLY (comma-separated case id prefixes), VERBOSE=1.
set -euo pipefail
BIN=${BIN:-.build/release/samlgate}
DIR=${HTTP_DIFF_DIR:-.run/http-diff}
MVPD=Cablevision

. scripts/load/common.sh
[ -x "$BIN" ] || { echo "no samlgate binary at $BIN (make release builds it)" >&2; exit 1; }
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || { echo "nginx is not installed (make deps-load installs it)" >&2; exit 1; }
mkdir -p "$DIR"
NGINX_DIR=$(fresh_dir "$DIR/nginx")

NGINX_BACKEND_PORT=$(free_port)
GATEWAY_BACKEND_PORT=$(free_port)
NGINX_PORT=$(free_port)
GATEWAY_PORT=$(free_port)

pids=()
cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

# The trust store the gateway needs to start (the cases use pass-through routes only).
mkdir -p "$DIR/trust/$MVPD"
[ -f "$DIR/idp/cert.pem" ] || "$BIN" idp keygen --out "$DIR/idp" >/dev/null
cp "$DIR/idp/cert.pem" "$DIR/trust/$MVPD/cert.pem"

: > "$DIR/backend.jsonl"
python3 scripts/load/http_diff.py backend --log "$DIR/backend.jsonl" \
    --listen "nginx:$NGINX_BACKEND_PORT" --listen "samlgate:$GATEWAY_BACKEND_PORT" 2>"$DIR/backend.log" &
pids+=($!)

# nginx as a user would put it in front of a backend: HTTP/1.1 and keep-alive to the upstream,
# nothing else set (Host is nginx's $proxy_host, no X-Forwarded-*, underscores_in_headers off).
cat > "$NGINX_DIR/nginx.conf" <<EOF
worker_processes 1;
pid $NGINX_DIR/nginx.pid;
error_log $NGINX_DIR/nginx-error.log info;
daemon off;
master_process on;
events { worker_connections 1024; }
http {
    access_log $NGINX_DIR/access.log;
    client_body_temp_path $NGINX_DIR/client-body;
    proxy_temp_path $NGINX_DIR/proxy;
    fastcgi_temp_path $NGINX_DIR/fastcgi;
    uwsgi_temp_path $NGINX_DIR/uwsgi;
    scgi_temp_path $NGINX_DIR/scgi;
    upstream backend {
        server 127.0.0.1:$NGINX_BACKEND_PORT;
        keepalive 16;
    }
    server {
        listen 127.0.0.1:$NGINX_PORT;
        location / {
            proxy_pass http://backend;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
EOF
"$NGINX" -p "$NGINX_DIR" -c "$NGINX_DIR/nginx.conf" -e "$NGINX_DIR/nginx-error.log" &
pids+=($!)

"$BIN" serve --port "$GATEWAY_PORT" --upstream "http://127.0.0.1:$GATEWAY_BACKEND_PORT" --trust-store "$DIR/trust" \
    --log-level error >/dev/null 2>"$DIR/gateway.log" &
pids+=($!)

wait_for "http://127.0.0.1:$NGINX_BACKEND_PORT/"
wait_for "http://127.0.0.1:$NGINX_PORT/"
wait_for "http://127.0.0.1:$GATEWAY_PORT/readyz"

echo "== $BIN against nginx $("$NGINX" -v 2>&1 | sed 's#.*/##')"
# In the background, so that a TERM or INT reaches the trap at once, not after the whole run.
python3 scripts/load/http_diff.py run --nginx "$NGINX_PORT" --gateway "$GATEWAY_PORT" \
    --gateway-backend "$GATEWAY_BACKEND_PORT" --backend-log "$DIR/backend.jsonl" --out "$DIR" \
    ${ONLY:+--only "$ONLY"} ${VERBOSE:+--verbose} &
driver=$!
pids+=($driver)
wait "$driver"
