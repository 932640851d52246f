#!/usr/bin/env bash
# make load-replay-store: the exchange load of scripts/load.sh with `replay-store: memory`, a Redis
# on loopback, the same with a replica and replay-store-replicas 1 (WAIT after each record), and a
# Redis Cluster of three primaries, in alternating rounds of one run (same machine state, same
# responses), and Redis's own CPU per exchange (every server of the store) from /proc/PID/stat.
# Prints a table; raw outputs in .run/load/.
# Knobs: ROUNDS (3), DURATION (10), CONNECTIONS (64), STORES ("memory redis redis-wait cluster"),
# and load.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/load/common.sh
ROUNDS=${ROUNDS:-3}
DIR=${LOAD_DIR:-.run/load}
STORES=${STORES:-memory redis redis-wait cluster}
export DURATION=${DURATION:-10} CONNECTIONS=${CONNECTIONS:-64}
mkdir -p "$DIR/redis"
command -v redis-server >/dev/null || { echo "redis-server is not installed (make deps installs it)"; exit 1; }

servers=()
trap 'for pid in "${servers[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true' EXIT INT TERM
# redis PORT ARGS…: a redis-server on PORT, waited for; its pid appended to `servers`.
redis() {
    start_redis "$DIR/redis/$1" "$@"
    servers+=("$REDIS_PID")
}

# Each store: its URL, its servers' pids and ports (flushed before each round: the same responses
# every round must not all be replays), and the gateway's extra flags.
declare -A url pids ports args
single=$(free_port); redis "$single"
url[redis]="redis://127.0.0.1:$single"; pids[redis]=${servers[-1]}; ports[redis]=$single
primary=$(free_port) replica=$(free_port)
redis "$primary"; redis "$replica" --replicaof 127.0.0.1 "$primary"
url[redis-wait]="redis://127.0.0.1:$primary"; pids[redis-wait]="${servers[-2]} ${servers[-1]}"; ports[redis-wait]=$primary
args[redis-wait]="--replay-store-replicas 1"
nodes=()
for _ in 1 2 3; do
    port=$(free_port) bus=$(free_port)
    redis "$port" --cluster-enabled yes --cluster-config-file nodes.conf --cluster-port "$bus"
    nodes+=("$port")
done
redis-cli --cluster create $(printf '127.0.0.1:%s ' "${nodes[@]}") --cluster-yes >/dev/null
for _ in $(seq 1 100); do redis-cli -p "${nodes[0]}" cluster info | grep -q 'cluster_state:ok' && break; sleep 0.1; done
url[cluster]="redis://127.0.0.1:${nodes[0]}"; pids[cluster]="${servers[-3]} ${servers[-2]} ${servers[-1]}"; ports[cluster]="${nodes[*]}"
for _ in $(seq 1 100); do redis-cli -p "$primary" info replication | grep -q 'state=online' && break; sleep 0.1; done

cpu() { local total=0 pid; for pid in "$@"; do total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done; echo "$total"; }
field() { sed -E "s/.* $1=([0-9]+).*/\1/" <<< "$2"; }

printf '| round | replay store | requests/s | verified exchanges/s | non-2xx | p99 | gateway CPU per request | Redis CPU per exchange |\n'
printf '|---:|---|---:|---:|---:|---:|---:|---:|\n'
for round in $(seq 1 "$ROUNDS"); do
    for store in $STORES; do
        before=0 after=0
        if [ "$store" != memory ]; then
            for port in ${ports[$store]}; do redis-cli -p "$port" flushall >/dev/null; done
            before=$(cpu ${pids[$store]})
        fi
        REPLAY_STORE=${url[$store]:-} GATEWAY_ARGS=${args[$store]:-} ./scripts/load.sh > "$DIR/replay-$store-$round.out" 2>&1
        [ "$store" != memory ] && after=$(cpu ${pids[$store]})
        line=$(grep '^SUMMARY ' "$DIR/replay-$store-$round.out")
        awk -v r="$(field requests "$line")" -v a="$(field accepted "$line")" -v e="$(field errors "$line")" \
            -v d="$(field duration_us "$line")" -v p99="$(field p99_us "$line")" -v g="$(field gateway_ticks "$line")" \
            -v t="$(field ticks "$line")" -v rc=$((after - before)) -v round="$round" -v store="$store" 'BEGIN {
            secs = d / 1e6
            redis = store != "memory" ? sprintf("%.1f µs", (rc / t) * 1e6 / (a > 0 ? a : 1)) : "—"
            printf "| %d | %s | %.0f | %.0f | %d | %.2f ms | %.0f µs | %s |\n", round, store, r / secs, a / secs, e, p99 / 1000,
                (g / t) * 1e6 / (r > 0 ? r : 1), redis
        }'
    done
done
