#!/usr/bin/env bash
# make h2-attacks: what each known HTTP/2 attack costs the gateway before it closes the
# connection (scripts/load/h2_attacks.py): a release gateway with h2c on loopback, the reference
# upstream behind it, ROUNDS attacking connections per attack one after another; the gateway's
# CPU per connection from /proc, beside one well-formed request's. Prints a Markdown table.
# Knobs: BIN (.build/release/samlgate), ROUNDS (20), H2_DIR (.run/h2-attacks).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/load/common.sh
BIN=${BIN:-.build/release/samlgate}
DIR=$(fresh_dir "${H2_DIR:-.run/h2-attacks}")
MVPD=Cablevision
[ -x "$BIN" ] || { echo "h2-attacks: $BIN is missing (make release)" >&2; exit 1; }
UPSTREAM_PORT=$(free_port) GATEWAY_PORT=$(free_port)
upstream="" gateway=""
cleanup() {
    for pid in $gateway $upstream; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

"$BIN" idp keygen --out "$DIR/idp" >/dev/null
mkdir -p "$DIR/trust/$MVPD"
cp "$DIR/idp/cert.pem" "$DIR/trust/$MVPD/cert.pem"
"$BIN" upstream --port "$UPSTREAM_PORT" --log-level error >/dev/null 2>&1 &
upstream=$!
"$BIN" serve --port "$GATEWAY_PORT" --h2c --upstream "http://127.0.0.1:$UPSTREAM_PORT" --trust-store "$DIR/trust" \
    --throttle-pass-through off --log-level error >/dev/null 2>"$DIR/gateway.log" &
gateway=$!
wait_for "http://127.0.0.1:$UPSTREAM_PORT/"
wait_for "http://127.0.0.1:$GATEWAY_PORT/readyz"
python3 scripts/load/h2_attacks.py "$GATEWAY_PORT" "$gateway" "${ROUNDS:-20}"
metrics=$(curl -sS "http://127.0.0.1:$GATEWAY_PORT/metrics")
grep -E '^samlgate_http2_(connection|stream)_errors_total' <<<"$metrics" | sed 's/^/  /'
