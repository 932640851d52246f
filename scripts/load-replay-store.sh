#!/usr/bin/env bash
# make load-replay-store: the exchange load of scripts/load.sh with `replay-store: memory` and with
# a Redis on loopback, in alternating rounds of one run (same machine state, same responses), and
# Redis's own CPU per exchange from /proc/PID/stat. Prints a table; raw outputs in .run/load/.
# Knobs: ROUNDS (3), DURATION (10), CONNECTIONS (64), REDIS_PORT (16379), and load.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
DIR=${LOAD_DIR:-.run/load}
REDIS_PORT=${REDIS_PORT:-16379}
export DURATION=${DURATION:-10} CONNECTIONS=${CONNECTIONS:-64}
mkdir -p "$DIR"
command -v redis-server >/dev/null || { echo "redis-server is not installed (make deps installs it)"; exit 1; }

redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --daemonize no --loglevel warning >/dev/null 2>&1 &
redis=$!
trap 'kill -TERM "$redis" 2>/dev/null || true; wait "$redis" 2>/dev/null || true' EXIT INT TERM
for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.05; done

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
field() { sed -E "s/.* $1=([0-9]+).*/\1/" <<< "$2"; }

printf '| round | replay store | requests/s | verified exchanges/s | non-2xx | p99 | gateway CPU per request | Redis CPU per exchange |\n'
printf '|---:|---|---:|---:|---:|---:|---:|---:|\n'
for round in $(seq 1 "$ROUNDS"); do
    for store in memory redis; do
        url=""
        if [ "$store" = redis ]; then
            # The same responses every round: a fresh record set, or they would all be replays.
            redis-cli -p "$REDIS_PORT" flushall >/dev/null
            url="redis://127.0.0.1:$REDIS_PORT"
        fi
        before=$(cpu "$redis")
        REPLAY_STORE=$url ./scripts/load.sh > "$DIR/replay-$store-$round.out" 2>&1
        after=$(cpu "$redis")
        line=$(grep '^SUMMARY ' "$DIR/replay-$store-$round.out")
        awk -v r="$(field requests "$line")" -v a="$(field accepted "$line")" -v e="$(field errors "$line")" \
            -v d="$(field duration_us "$line")" -v p99="$(field p99_us "$line")" -v g="$(field gateway_ticks "$line")" \
            -v t="$(field ticks "$line")" -v rc=$((after - before)) -v round="$round" -v store="$store" 'BEGIN {
            secs = d / 1e6
            redis = store == "redis" ? sprintf("%.1f µs", (rc / t) * 1e6 / (a > 0 ? a : 1)) : "—"
            printf "| %d | %s | %.0f | %.0f | %d | %.2f ms | %.0f µs | %s |\n", round, store, r / secs, a / secs, e, p99 / 1000,
                (g / t) * 1e6 / (r > 0 ? r : 1), redis
        }'
    done
done
echo
echo "redis: $(redis-cli -p "$REDIS_PORT" info commandstats | grep -E '^cmdstat_set:' || echo 'no SET counted')"
