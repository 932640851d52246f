#!/usr/bin/env bash
# make cluster-check: several replicas on one machine, for real. Starts the reference upstream,
# redis-server, two gateway replicas sharing it (replay-store: redis://…) and nginx round-robin in
# front of them, all on loopback, and checks:
#   1. a response accepted through one replica is refused as a replay through the other;
#   2. with Redis stopped, closed answers 503 replay_store_unavailable and open accepts;
#   3. Redis restarted: both replicas record again, without a restart;
#   4. one replica killed (SIGKILL) under GET load through nginx: no request lost, the other serves.
# Exits 1 on the first failed check. Knobs: BIN, CLUSTER_DIR (.run/cluster), LOAD_SECONDS (6).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/load/common.sh
BIN=${BIN:-.build/release/samlgate}
DIR=${CLUSTER_DIR:-.run/cluster}
LOAD_SECONDS=${LOAD_SECONDS:-6}
MVPD=Cablevision
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
require_tools cluster-check "make release deps-load" redis-server redis-cli curl wrk "$NGINX" "$BIN"

REDIS_PORT=$(free_port) UPSTREAM_PORT=$(free_port) G1=$(free_port) G2=$(free_port) G3=$(free_port) NGINX_PORT=$(free_port)

rm -rf "$DIR" && mkdir -p "$DIR/trust/$MVPD" "$DIR/nginx"
"$BIN" idp keygen --out "$DIR/idp" >/dev/null
cp "$DIR/idp/cert.pem" "$DIR/trust/$MVPD/cert.pem"
"$BIN" idp issue --key "$DIR/idp/key.pem" --cert "$DIR/idp/cert.pem" --mvpd "$MVPD" --user cluster@example.com \
    --ttl 3600 --encoded --count 12 > "$DIR/responses.txt"

pids=()
redis=""
cleanup() {
    for pid in "${pids[@]}" $redis; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

start_redis_shared() {
    start_redis "$DIR/redis" "$REDIS_PORT"
    redis=$REDIS_PID
}
stop_redis() { kill -TERM "$redis"; wait "$redis" 2>/dev/null || true; redis=""; }

gateway() {  # PORT FAILURE-POLICY: starts a replica, prints its pid
    "$BIN" serve --port "$1" --upstream "http://127.0.0.1:$UPSTREAM_PORT" --trust-store "$DIR/trust" --log-level warning \
        --replay-store "redis://127.0.0.1:$REDIS_PORT" --replay-store-failure "$2" $(throttle_args "$BIN") >/dev/null 2>>"$DIR/gateway-$1.log" &
    echo $!
}
wait_ready() { await_or_fail "cluster-check: port $1's /readyz" 100 ready "http://127.0.0.1:$1/readyz"; }

# exchange PORT LINE: POSTs response number LINE; prints "status code".
exchange() {
    local body="requestor=REF&deviceId=cluster-device&mvpd=$MVPD&deviceType=iOS&SAMLResponse=$(sed -n "$2p" "$DIR/responses.txt")"
    local out status
    out=$(curl -sS -o "$DIR/reply.json" -w '%{http_code}' -H 'Content-Type: application/x-www-form-urlencoded' \
        --data-binary "$body" "http://127.0.0.1:$1/api/v1/tokens/authn")
    status=$out
    # samlgate's own code leads the answer's `details` (its `code` is the backend's enhanced one).
    echo "$status $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("details", "-").split(";")[0])' "$DIR/reply.json" 2>/dev/null || echo -)"
}
failures=0
expect() {  # WHAT EXPECTED ACTUAL
    if [ "$2" = "$3" ]; then echo "ok   $1: $3"; else echo "FAIL $1: expected '$2', got '$3'"; failures=$((failures + 1)); fi
}

"$BIN" upstream --port "$UPSTREAM_PORT" --log-level error >/dev/null 2>&1 &
pids+=($!)
start_redis_shared
g1=$(gateway "$G1" closed); pids+=($g1)
g2=$(gateway "$G2" closed); pids+=($g2)
sed -e "s|@PREFIX@|$PWD/$DIR/nginx|g" -e "s|@PORT@|$NGINX_PORT|g" -e "s|@G1@|$G1|g" -e "s|@G2@|$G2|g" \
    scripts/load/cluster-nginx.conf > "$DIR/nginx/nginx.conf"
"$NGINX" -p "$PWD/$DIR/nginx" -c "$PWD/$DIR/nginx/nginx.conf" -e "$PWD/$DIR/nginx/nginx-error.log" &
pids+=($!)
wait_ready "$G1"; wait_ready "$G2"; wait_ready "$NGINX_PORT"

echo "1. one response, two replicas"
expect "accepted by replica 1" "204 -" "$(exchange "$G1" 1)"
expect "the same through replica 2" "400 replayed" "$(exchange "$G2" 1)"
expect "another through nginx" "204 -" "$(exchange "$NGINX_PORT" 2)"
expect "the same again through nginx (the other replica)" "400 replayed" "$(exchange "$NGINX_PORT" 2)"

echo "2. Redis stopped"
stop_redis
expect "closed, replica 1" "503 replay_store_unavailable" "$(exchange "$G1" 3)"
expect "closed, replica 2" "503 replay_store_unavailable" "$(exchange "$G2" 3)"
g3=$(gateway "$G3" open); pids+=($g3)
wait_ready "$G3"
expect "open (a third replica)" "204 -" "$(exchange "$G3" 4)"
kill -TERM "$g3"

echo "3. Redis restarted"
start_redis_shared
for replica in "$G1" "$G2"; do
    line=$((replica == G1 ? 5 : 6)); got=""
    for _ in $(seq 1 30); do got=$(exchange "$replica" "$line"); [ "$got" = "204 -" ] && break; sleep 0.1; done
    expect "replica on port $replica records again" "204 -" "$got"
done

echo "4. replica 2 killed under load (GET through nginx, ${LOAD_SECONDS} s)"
wrk -t1 -c16 -d"${LOAD_SECONDS}s" -s scripts/load/statuses.lua "http://127.0.0.1:$NGINX_PORT" -- /api/v1/config/REF > "$DIR/wrk.out" &
load=$!
sleep $((LOAD_SECONDS / 3))
kill -KILL "$g2"
wait "$load" || true
line=$(grep '^STATUSES' "$DIR/wrk.out" || echo "STATUSES none")
echo "     $line"
lost=$(awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] != "200") n += kv[2] } } END { print n + 0 }' <<< "$line")
served=$(sed -nE 's/.* 200=([0-9]+).*/\1/p' <<< "$line")
expect "requests not answered 200 (incl. socket errors)" "0" "$lost"
[ "${served:-0}" -gt 0 ] && echo "ok   ${served} answered 200" || { echo "FAIL nothing served"; failures=$((failures + 1)); }
expect "replica 1 still serves" "204 -" "$(exchange "$G1" 12)"

echo
[ "$failures" -eq 0 ] && echo "cluster-check: all checks passed" || { echo "cluster-check: $failures check(s) failed"; exit 1; }
