#!/usr/bin/env bash
# make faults: failures injected into real processes (release build) on loopback, each with what
# the gateway answered and how fast it recovered. The in-process fault tests (UpstreamFaultTests,
# UpstreamFailureTests, TrustStorePollTests, …) run in make test; these need processes, signals
# or a mount:
#   1. the upstream killed (SIGKILL) under load and started again on its port;
#   2. SIGHUP with a half-written, then a corrupt trust store, then the good one back;
#   3. SIGTERM under load: the drain, its duration and what the clients saw;
#   4. samlgate batch --out on a full disk (a 256 KiB tmpfs; needs root for the mount).
# Prints one line per fault with its figures; exit 1 when the gateway crashed or did not recover.
set -uo pipefail
BIN=${BIN:-.build/release/samlgate}
. "$(dirname "$0")/load/common.sh"
DIR=${FAULTS_DIR:-.run/faults}
MVPD=Cablevision
GATEWAY_PORT=${GATEWAY_PORT:-18680}
UPSTREAM_PORT=${UPSTREAM_PORT:-19690}
URL="http://127.0.0.1:$GATEWAY_PORT"
failed=0

command -v wrk >/dev/null || { echo "wrk is not installed (make deps-load installs it)"; exit 1; }
rm -rf "$DIR/trust" "$DIR/full"
mkdir -p "$DIR/trust/$MVPD"
"$BIN" idp keygen --out "$DIR/idp" >/dev/null
cp "$DIR/idp/cert.pem" "$DIR/trust/$MVPD/cert.pem"
"$BIN" idp issue --key "$DIR/idp/key.pem" --cert "$DIR/idp/cert.pem" --mvpd "$MVPD" --user faults@example.com \
    --ttl 3600 --encoded --count 20 > "$DIR/responses.txt"

pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    mountpoint -q "$DIR/full" 2>/dev/null && umount "$DIR/full"
}
trap cleanup EXIT INT TERM
now_ms() { date +%s%3N; }
status_of() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }
exchange() {
    local line
    line=$(sed -n "${1}p" "$DIR/responses.txt")
    curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H 'Content-Type: application/x-www-form-urlencoded' \
        --data "requestor=REF&deviceId=faults-device&mvpd=$MVPD&deviceType=iOS&SAMLResponse=$line" "$URL/api/v1/tokens/authn"
}
metric() { curl -fsS --max-time 5 "$URL/metrics" | awk -v prefix="$1" 'index($0, prefix " ") == 1 {print $2}'; }
start_upstream() {
    "$BIN" upstream --port "$UPSTREAM_PORT" --log-level error >/dev/null 2>&1 &
    upstream=$!
    pids+=($upstream)
    for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$UPSTREAM_PORT/api/v1/config/REF" >/dev/null 2>&1 && break; sleep 0.05; done
}
start_gateway() {
    "$BIN" serve --port "$GATEWAY_PORT" --upstream "http://127.0.0.1:$UPSTREAM_PORT" --trust-store "$DIR/trust" \
        --upstream-cooldown 1 --log-level error $(throttle_args "$BIN") >/dev/null 2>>"$DIR/gateway.log" &
    gateway=$!
    pids+=($gateway)
    for _ in $(seq 1 100); do curl -fsS "$URL/readyz" >/dev/null 2>&1 && break; sleep 0.05; done
}
report() { printf '%-34s %s\n' "$1" "$2"; }

start_upstream
start_gateway

# 1. Upstream killed under load, then started again.
wrk -t1 -c32 -d12s --timeout 5s "$URL/api/v1/config/REF" > "$DIR/kill.wrk" 2>&1 &
load=$!
sleep 3
kill -KILL "$upstream"
wait "$upstream" 2>/dev/null
outage=$(status_of "$URL/api/v1/config/REF")
outage_code=$(curl -s --max-time 5 "$URL/api/v1/config/REF" | sed -E 's/.*"code":"([^"]*)".*/\1/')
sleep 3
start_upstream
restarted=$(now_ms)
recovered=""
for _ in $(seq 1 200); do
    [ "$(status_of "$URL/api/v1/config/REF")" = 200 ] && { recovered=$(now_ms); break; }
    sleep 0.02
done
wait "$load"
timeouts=$(sed -nE 's/.*timeout ([0-9]+).*/\1/p' "$DIR/kill.wrk" | head -1)
if kill -0 "$gateway" 2>/dev/null && [ -n "$recovered" ]; then
    report "upstream killed under load" "answered $outage $outage_code during the outage; served again $((recovered - restarted)) ms after the upstream was back (cool-down 1 s); wrk timeouts (hung requests): ${timeouts:-0}; gateway pid unchanged"
else
    report "upstream killed under load" "FAILED: gateway alive=$(kill -0 "$gateway" 2>/dev/null && echo yes || echo no), recovered=${recovered:-no}"
    failed=1
fi

# 2. SIGHUP with a half-written, then a corrupt trust store.
good=$(cat "$DIR/trust/$MVPD/cert.pem")
head -c $(( ${#good} / 2 )) <<< "$good" > "$DIR/trust/$MVPD/cert.pem"
kill -HUP "$gateway"; sleep 0.5
half=$(metric 'samlgate_trust_store_reloads_total{result="failed"}')
first=$(exchange 1)
printf 'not a certificate\n' > "$DIR/trust/$MVPD/cert.pem"
kill -HUP "$gateway"; sleep 0.5
corrupt=$(metric 'samlgate_trust_store_reloads_total{result="failed"}')
second=$(exchange 2)
printf '%s\n' "$good" > "$DIR/trust/$MVPD/cert.pem"
kill -HUP "$gateway"; sleep 0.5
ok=$(metric 'samlgate_trust_store_reloads_total{result="ok"}')
third=$(exchange 3)
if [ "$first" = 204 ] && [ "$second" = 204 ] && [ "${half:-0}" = 1 ] && [ "${corrupt:-0}" = 2 ] && [ "${ok:-0}" = 1 ] && [ "$third" = 204 ]; then
    report "SIGHUP, broken trust store" "half-written: reload failed (count $half), exchange $first; corrupt: failed (count $corrupt), exchange $second; restored: reloaded, exchange $third"
else
    report "SIGHUP, broken trust store" "FAILED: failed=$half/$corrupt ok=$ok exchanges $first $second $third"
    failed=1
fi

# 3. SIGTERM under load.
wrk -t1 -c64 -d8s --timeout 5s --latency "$URL/api/v1/config/REF" > "$DIR/term.wrk" 2>&1 &
load=$!
sleep 3
kill -TERM "$gateway"
signalled=$(now_ms)
wait "$gateway"
code=$?
exited=$(now_ms)
# wrk would go on knocking at the closed port until its time is up: stop it (it prints its summary).
kill -INT "$load" 2>/dev/null
wait "$load"
errors=$(grep -E 'Socket errors' "$DIR/term.wrk" || echo "Socket errors: none")
non2xx=$(sed -nE 's/.*Non-2xx or 3xx responses: ([0-9]+).*/\1/p' "$DIR/term.wrk")
report "SIGTERM under load (64 conns)" "exit status $code after $((exited - signalled)) ms; answers other than 200: ${non2xx:-0}; $errors (read: a request cut; connect/write: wrk knocking after the exit)"
[ "$code" = 0 ] || failed=1

# 4. batch --out on a full disk.
if [ "$(id -u)" = 0 ] && mkdir -p "$DIR/full" && mount -t tmpfs -o size=256k tmpfs "$DIR/full" 2>/dev/null; then
    # 300 records of ~11 KB encoded: some 3 MB of output for a 256 KiB disk.
    "$BIN" idp issue --key "$DIR/idp/key.pem" --cert "$DIR/idp/cert.pem" --mvpd "$MVPD" --user faults@example.com \
        --ttl 3600 --pad-to 8192 --encoded --count 300 | sed -E 's/.*/{"SAMLResponse":"&"}/' > "$DIR/batch-input.jsonl"
    "$BIN" batch "$DIR/batch-input.jsonl" --out "$DIR/full/encoded.jsonl" > /dev/null 2> "$DIR/batch.err"
    code=$?
    left=$(ls -A "$DIR/full")
    message=$(grep -m1 -o 'output_failed[^"]*' "$DIR/batch.err" | head -c 120)
    if [ "$code" = 1 ] && [ -z "$left" ]; then
        report "batch --out on a full disk" "exit 1, '$message', nothing left under the final name or beside it"
    else
        report "batch --out on a full disk" "FAILED: exit $code, left: ${left:-nothing}"
        failed=1
    fi
    umount "$DIR/full"
else
    report "batch --out on a full disk" "skipped (needs root to mount a tmpfs)"
fi
exit $failed
