#!/usr/bin/env bash
# make header-costs: the gateway's CPU per request for the worst spelling of each header it
# parses, against a junk header of the same size on the same route (scripts/load/header_costs.py).
# The gateway trusts 127.0.0.1 as a proxy (so X-Forwarded-For is read) and throttles (so the
# client key is computed), with the reference upstream behind it. BASELINE_BIN (another build):
# its table too, measured after this build's in the same sitting.
# Knobs: ROUNDS (5), REQUESTS (200 per round and case), SIZE (40000 bytes).
set -euo pipefail
BIN=${BIN:-.build/release/samlgate}
DIR=${LOAD_DIR:-.run/header-costs}
MVPD=Cablevision
mkdir -p "$DIR"
. scripts/load/common.sh

UPSTREAM_PORT=$(free_port)
GATEWAY_PORT=$(free_port)
upstream=""
gateway=""
cleanup() {
    [ -n "$gateway" ] && kill -TERM "$gateway" 2>/dev/null || true
    [ -n "$upstream" ] && kill -TERM "$upstream" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

mkdir -p "$DIR/trust/$MVPD"
[ -f "$DIR/idp/cert.pem" ] || "$BIN" idp keygen --out "$DIR/idp" >/dev/null
cp "$DIR/idp/cert.pem" "$DIR/trust/$MVPD/cert.pem"
"$BIN" upstream --port "$UPSTREAM_PORT" --log-level error >/dev/null 2>&1 &
upstream=$!
wait_for "http://127.0.0.1:$UPSTREAM_PORT/"

for binary in "$BIN" ${BASELINE_BIN:+"$BASELINE_BIN"}; do
    echo "== $binary"
    "$binary" serve --port "$GATEWAY_PORT" --upstream "http://127.0.0.1:$UPSTREAM_PORT" --trust-store "$DIR/trust" \
        --trusted-proxies 127.0.0.1/32 --log-level error $(throttle_args "$binary") >/dev/null 2>>"$DIR/gateway.log" &
    gateway=$!
    wait_for "http://127.0.0.1:$GATEWAY_PORT/readyz"
    python3 scripts/load/header_costs.py "$gateway" "$GATEWAY_PORT" --rounds "${ROUNDS:-5}" --requests "${REQUESTS:-200}" --size "${SIZE:-40000}"
    kill -TERM "$gateway" 2>/dev/null || true
    wait "$gateway" 2>/dev/null || true
    gateway=""
done
