#!/usr/bin/env bash
# make tracing-check: the gateway's span exports read by OpenTelemetry's own protobuf classes
# (opentelemetry-proto from PyPI, in .build/tools-venv), not by code of ours. Starts on loopback
# the reference upstream, a receiver (scripts/load/otlp_check.py) and the gateway exporting to it
# at tracing-sample-ratio 1; sends a v1 exchange and a pass-through request (its token), both continuing one
# client trace with a tracestate; stops the gateway (it sends its spans on the way out); then
# checks every span: parsed, ids, parents, kinds, typed attributes, trace state, stage timing.
# Exit 1 when a check fails. Knobs: BIN (.build/debug/samlgate), TRACING_DIR (.run/tracing-check).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/load/common.sh
. scripts/tools-venv.sh
BIN=${BIN:-.build/debug/samlgate}
DIR=$(fresh_dir "${TRACING_DIR:-.run/tracing-check}")
MVPD=Cablevision
TRACE_ID=4bf92f3577b34da6a3ce929d0e0e4736
CLIENT_SPAN=00f067aa0ba902b7
STATE="vendor=abc,other@tenant=x1"
SERVICE=samlgate-check
[ -x "$BIN" ] || { echo "tracing-check: $BIN is missing (make build)" >&2; exit 1; }
tools_venv tracing-check opentelemetry.proto=opentelemetry-proto

UPSTREAM_PORT=$(free_port) RECEIVER_PORT=$(free_port) GATEWAY_PORT=$(free_port)
upstream="" receiver="" gateway=""
cleanup() {
    for pid in $gateway $receiver $upstream; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

"$BIN" idp keygen --out "$DIR/idp" >/dev/null
mkdir -p "$DIR/trust/$MVPD"
cp "$DIR/idp/cert.pem" "$DIR/trust/$MVPD/cert.pem"
saml=$("$BIN" idp issue --key "$DIR/idp/key.pem" --cert "$DIR/idp/cert.pem" --mvpd "$MVPD" --user check@example.com --encoded)

"$BIN" upstream --port "$UPSTREAM_PORT" --log-level error >/dev/null 2>&1 &
upstream=$!
"$TOOLS_PYTHON" scripts/load/otlp_check.py serve "$RECEIVER_PORT" "$DIR/spans.jsonl" 2>"$DIR/receiver.log" &
receiver=$!
"$BIN" serve --port "$GATEWAY_PORT" --upstream "http://127.0.0.1:$UPSTREAM_PORT" --trust-store "$DIR/trust" \
    --tracing-endpoint "http://127.0.0.1:$RECEIVER_PORT/v1/traces" --tracing-sample-ratio 1 --tracing-service-name "$SERVICE" \
    --log-level warning >/dev/null 2>"$DIR/gateway.log" &
gateway=$!
wait_for "http://127.0.0.1:$UPSTREAM_PORT/"
wait_for "http://127.0.0.1:$GATEWAY_PORT/readyz"

trace=(-H "traceparent: 00-$TRACE_ID-$CLIENT_SPAN-01" -H "tracestate: $STATE")
status=$(curl -sS -o /dev/null -w '%{http_code}' "${trace[@]}" -H 'Content-Type: application/x-www-form-urlencoded' \
    --data "requestor=REF&deviceId=check-device&mvpd=$MVPD&deviceType=iOS&SAMLResponse=$saml" \
    "http://127.0.0.1:$GATEWAY_PORT/api/v1/tokens/authn")
[ "$status" = 204 ] || { echo "tracing-check: the exchange answered $status" >&2; exit 1; }
# Passed through: the token the exchange made, retrieved.
status=$(curl -sS -o /dev/null -w '%{http_code}' "${trace[@]}" "http://127.0.0.1:$GATEWAY_PORT/api/v1/tokens/authn?requestor=REF&deviceId=check-device")
[ "$status" = 200 ] || { echo "tracing-check: pass-through answered $status" >&2; exit 1; }
# SIGTERM: the gateway drains, then sends what its exporter holds, then exits.
kill -TERM "$gateway"
wait "$gateway" || { echo "tracing-check: the gateway did not exit cleanly" >&2; cat "$DIR/gateway.log" >&2; exit 1; }
gateway=""
[ -s "$DIR/spans.jsonl" ] || { echo "tracing-check: nothing was exported" >&2; cat "$DIR/receiver.log" "$DIR/gateway.log" >&2; exit 1; }
"$TOOLS_PYTHON" scripts/load/otlp_check.py judge "$DIR/spans.jsonl" "$TRACE_ID" "$CLIENT_SPAN" "$STATE" "$SERVICE"
