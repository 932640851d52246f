#!/usr/bin/env bash
# Part of make cluster-check: a Redis primary killed (SIGKILL) under exchanges, behind Sentinel
# and in a Redis Cluster, each with replay-store-replicas 0 and 1, all on loopback. For each run:
# what the clients saw (scripts/load/failover_load.py): 503s and for how long, how soon an
# exchange was accepted again, and how many accepted responses a second try got accepted again
# (records the failover lost). The killed primary is started again (empty, no persistence) once
# the failover is done, as a supervisor would, and rejoins as a replica.
# Fails when anything but 204/503 was answered, or when a run with replay-store-replicas 1
# accepted a response twice. Knobs: BIN, FAILOVER_DIR (.run/failover), SECONDS_PER_RUN (30),
# RATE (exchanges per second, 1000).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/load/common.sh
BIN=${BIN:-.build/release/samlgate}
DIR=${FAILOVER_DIR:-.run/failover}
RUN_SECONDS=${SECONDS_PER_RUN:-30}
RATE=${RATE:-1000}
MVPD=Cablevision
require_tools redis-failover "make release deps-load" redis-server redis-cli curl python3 "$BIN"

rm -rf "$DIR" && mkdir -p "$DIR/trust/$MVPD"
"$BIN" idp keygen --out "$DIR/idp" >/dev/null
cp "$DIR/idp/cert.pem" "$DIR/trust/$MVPD/cert.pem"
"$BIN" idp issue --key "$DIR/idp/key.pem" --cert "$DIR/idp/cert.pem" --mvpd "$MVPD" --user failover@example.com \
    --ttl 3600 --encoded --count $((RUN_SECONDS * RATE * 11 / 10)) > "$DIR/responses.txt"

pids=()
cleanup() {
    for pid in "${pids[@]}" $(cat "$DIR"/*.pid 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

# redis NAME PORT ARGS…: a redis-server in $DIR/NAME (its pid in $DIR/NAME.pid), waited for.
redis() {
    local name=$1
    shift
    start_redis "$DIR/$name" "$@"
    echo "$REDIS_PID" > "$DIR/$name.pid"
    # Killed on purpose (the fault): no "Killed" line from bash when it is reaped.
    disown "$REDIS_PID"
}
stop_all() {
    local file pid
    for file in "$DIR"/*.pid; do
        pid=$(cat "$file"); rm -f "$file"
        kill -KILL "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
    done
    # The next run starts empty: a replica saves what it synced (dump.rdb, loaded at the next
    # start whatever --save says), and a cluster node its nodes.conf.
    rm -rf "$DIR"/primary "$DIR"/replica "$DIR"/node? "$DIR"/sentinel? "$DIR"/fault.failed
}

gateway() {  # STORE-URL REPLICAS: starts the gateway on $GATEWAY_PORT
    "$BIN" serve --port "$GATEWAY_PORT" --upstream "http://127.0.0.1:$UPSTREAM_PORT" --trust-store "$DIR/trust" --log-level warning \
        --replay-store "$1" --replay-store-replicas "$2" --replay-store-replica-wait 0.2 $(throttle_args "$BIN") \
        >/dev/null 2>>"$DIR/gateway.log" &
    echo $! > "$DIR/gateway.pid"
    await_or_fail "redis-failover: the gateway's /readyz" 100 ready "http://127.0.0.1:$GATEWAY_PORT/readyz"
}

sentinels_met() {  # SENTINEL-PORT...: each knows the two others and the replica
    local s
    for s in "$@"; do
        [ "$(redis-cli -p "$s" sentinel sentinels m 2>/dev/null | grep -c '^runid$')" = 2 ] || return 1
        [ "$(redis-cli -p "$s" sentinel replicas m 2>/dev/null | grep -c '^runid$')" = 1 ] || return 1
    done
}

replica_online() { redis-cli -p "$1" info replication | grep -q 'state=online'; }
cluster_ok() { redis-cli -p "$1" cluster info | grep -q 'cluster_state:ok'; }

failures=0
report() {  # TOPOLOGY REPLICAS LINE
    local line=$3
    get() { sed -E "s/.* $1=([^ ]+).*/\1/" <<< "$line"; }
    printf '| %s | %s | %s | %s | %s | %s s | %s |\n' "$1" "$2" "$(get exchanges)" "$(get accepted)" "$(get unavailable)" \
        "$(get outage_s)" "$(get replayed)"
    if [ -s "$DIR/fault.failed" ]; then
        echo "FAIL $1, replicas $2: $(cat "$DIR/fault.failed")"; failures=$((failures + 1))
    fi
    if [ "$(get other)" != 0 ]; then
        echo "FAIL $1, replicas $2: $(get other) answers neither 204 nor 503 (status:count $(get statuses))"; failures=$((failures + 1))
    fi
    if [ "$(get unchecked)" != 0 ]; then
        echo "FAIL $1, replicas $2: $(get unchecked) accepted responses could not be checked again (the store unavailable)"
        failures=$((failures + 1))
    fi
    if [ "$2" != 0 ] && [ "$(get replayed)" != 0 ]; then
        echo "FAIL $1, replicas $2: $(get replayed) accepted responses accepted again"; failures=$((failures + 1))
    fi
}

load() {  # FAULT-SCRIPT: exchanges for RUN_SECONDS, the fault at 3 s
    python3 scripts/load/failover_load.py --port "$GATEWAY_PORT" --responses "$DIR/responses.txt" --mvpd "$MVPD" \
        --seconds "$RUN_SECONDS" --fault-at 3 --fault "bash $1" --rate "$RATE" | tee -a "$DIR/failover.out" | grep '^FAILOVER'
}

UPSTREAM_PORT=$(free_port) GATEWAY_PORT=$(free_port)
"$BIN" upstream --port "$UPSTREAM_PORT" --log-level error >/dev/null 2>&1 &
pids+=($!)

sentinel_run() {  # REPLICAS
    local primary replica s
    primary=$(free_port) replica=$(free_port)
    redis primary "$primary"
    redis replica "$replica" --replicaof 127.0.0.1 "$primary"
    local sentinels=()
    for s in 1 2 3; do
        local port; port=$(free_port); sentinels+=("$port")
        mkdir -p "$DIR/sentinel$s"
        printf 'port %s\nbind 127.0.0.1\ndir %s\nsentinel monitor m 127.0.0.1 %s 2\nsentinel down-after-milliseconds m 1000\nsentinel failover-timeout m 3000\n' \
            "$port" "$PWD/$DIR/sentinel$s" "$primary" > "$DIR/sentinel$s/sentinel.conf"
        redis-server "$DIR/sentinel$s/sentinel.conf" --sentinel --loglevel warning >/dev/null 2>&1 &
        echo $! > "$DIR/sentinel$s.pid"
    done
    # The Sentinels must know each other and the replica before a failover can be elected.
    await_or_fail "redis-failover: the Sentinels meeting" 150 sentinels_met "${sentinels[@]}"
    await_or_fail "redis-failover: the replica online" 100 replica_online "$primary"
    local url="redis-sentinel://$(printf '127.0.0.1:%s,' "${sentinels[@]}" | sed 's/,$//')#m"
    gateway "$url" "$1"
    # The fault: the primary killed; once every Sentinel names the replica, the old primary
    # comes back (empty) and the Sentinels make it the new primary's replica.
    cat > "$DIR/fault.sh" <<EOF
kill -KILL \$(cat $DIR/primary.pid)
for _ in \$(seq 1 300); do
    named=0
    for s in ${sentinels[*]}; do redis-cli -p \$s sentinel get-master-addr-by-name m 2>/dev/null | grep -qx $replica && named=\$((named + 1)); done
    [ \$named = 3 ] && break; sleep 0.1
done
[ \$named = 3 ] || echo "the Sentinels did not all name the replica within 30 s" >> $DIR/fault.failed
redis-server --port $primary --bind 127.0.0.1 --save "" --appendonly no --dir $PWD/$DIR/primary --loglevel warning >/dev/null 2>&1 &
echo \$! > $DIR/primary.pid
EOF
    report "Sentinel (1 primary, 1 replica, 3 Sentinels)" "$1" "$(load "$DIR/fault.sh")"
    stop_all
}

cluster_run() {  # REPLICAS
    local ports=() buses=() n
    for n in 1 2 3 4 5 6; do
        # The bus port given: port + 10000 may be past 65535 for a port the kernel handed out.
        local port bus; port=$(free_port) bus=$(free_port); ports+=("$port") buses+=("$bus")
        redis "node$n" "$port" --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 1000 --cluster-port "$bus"
    done
    redis-cli --cluster create $(printf '127.0.0.1:%s ' "${ports[@]}") --cluster-replicas 1 --cluster-yes >/dev/null
    await_or_fail "redis-failover: the cluster's state ok" 100 cluster_ok "${ports[0]}"
    # Node 2 is killed; its replica (the node whose INFO names node 2's port as its primary) is
    # promoted.
    local victim=${ports[1]} heir="" port
    for _ in $(seq 1 100); do
        for port in "${ports[@]}"; do
            redis-cli -p "$port" info replication | grep -q "master_port:$victim" && heir=$port
        done
        [ -n "$heir" ] && redis-cli -p "$heir" info replication | grep -q 'master_link_status:up' && break; sleep 0.1
    done
    [ -n "$heir" ] || { echo "redis-failover: node 2 has no replica" >&2; exit 1; }
    redis-cli -p "$heir" info replication | grep -q 'master_link_status:up' \
        || { echo "redis-failover: node 2's replica never linked to it" >&2; exit 1; }
    gateway "redis://127.0.0.1:${ports[0]},127.0.0.1:${ports[2]}" "$1"
    # The fault: a primary killed; once the cluster is whole again (its replica promoted), the
    # old primary comes back and rejoins as that replica's replica (nodes.conf is kept).
    cat > "$DIR/fault.sh" <<EOF
kill -KILL \$(cat $DIR/node2.pid)
for _ in \$(seq 1 300); do redis-cli -p $heir info replication | grep -q 'role:master' && break; sleep 0.1; done
redis-cli -p $heir info replication | grep -q 'role:master' || echo "node 2's replica was not promoted within 30 s" >> $DIR/fault.failed
redis-server --port $victim --bind 127.0.0.1 --save "" --appendonly no --dir $PWD/$DIR/node2 --loglevel warning \
    --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 1000 --cluster-port ${buses[1]} >/dev/null 2>&1 &
echo \$! > $DIR/node2.pid
EOF
    report "Cluster (3 primaries, 3 replicas)" "$1" "$(load "$DIR/fault.sh")"
    stop_all
}

echo "5. a Redis primary killed under exchanges (${RATE}/s for ${RUN_SECONDS} s, the kill at 3 s)"
echo
printf '| topology | replay-store-replicas | exchanges | accepted | 503 | from the kill to the last 503 | accepted again after |\n'
printf '|---|---:|---:|---:|---:|---:|---:|\n'
for replicas in ${SENTINEL_REPLICAS-0 1}; do sentinel_run "$replicas"; done
for replicas in ${CLUSTER_REPLICAS-0 1}; do cluster_run "$replicas"; done
echo
[ "$failures" -eq 0 ] && echo "redis-failover: all checks passed" || { echo "redis-failover: $failures check(s) failed"; exit 1; }
