#!/usr/bin/env bash
# make run: the reference upstream and the gateway on loopback, with a generated test IdP and
# trust store under .run/, a ready-to-paste curl, and both stopped on Ctrl-C.
set -euo pipefail
BIN=${BIN:-.build/release/samlgate}
RUN=${RUN_DIR:-.run}
GATEWAY_PORT=${GATEWAY_PORT:-8080}
UPSTREAM_PORT=${UPSTREAM_PORT:-9090}
MVPD=${MVPD:-Cablevision}

mkdir -p "$RUN/trust/$MVPD"
[ -f "$RUN/idp/cert.pem" ] || "$BIN" idp keygen --out "$RUN/idp" >/dev/null
cp "$RUN/idp/cert.pem" "$RUN/trust/$MVPD/cert.pem"
echo "$MVPD" > "$RUN/trust/$MVPD/platform-mapping-id"

pids=()
stop() {
    trap - INT TERM EXIT
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    echo "stopped"
}
trap stop INT TERM EXIT

"$BIN" upstream --port "$UPSTREAM_PORT" --log-format text &
pids+=($!)
"$BIN" serve --port "$GATEWAY_PORT" --upstream "http://127.0.0.1:$UPSTREAM_PORT" --trust-store "$RUN/trust" --log-format text &
pids+=($!)

for _ in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$GATEWAY_PORT/readyz" >/dev/null 2>&1 && break
    sleep 0.1
done

cat <<MSG

== reference upstream: http://127.0.0.1:$UPSTREAM_PORT   gateway: http://127.0.0.1:$GATEWAY_PORT
== trust store: $RUN/trust ($MVPD, test IdP key in $RUN/idp)
== exchange a freshly signed response (paste; each run signs a new one):

curl -i http://127.0.0.1:$GATEWAY_PORT/api/v1/tokens/authn \\
  --data-urlencode requestor=REF --data-urlencode deviceId=device-1 \\
  --data-urlencode mvpd=$MVPD --data-urlencode deviceType=iOS \\
  --data-urlencode "SAMLResponse=\$($BIN idp issue --key $RUN/idp/key.pem --cert $RUN/idp/cert.pem --mvpd $MVPD --user alice@example.com)"

== then: curl 'http://127.0.0.1:$GATEWAY_PORT/api/v1/tokens/authn?requestor=REF&deviceId=device-1'  (token, through the pass-through)
==       curl http://127.0.0.1:$UPSTREAM_PORT/reference/exchanges   (what reached the upstream)
==       curl http://127.0.0.1:$GATEWAY_PORT/metrics
== watch every Apple SSO cookbook flow (v1, v2; happy, denied, unsupported, expired) go through this gateway:

$BIN demo --gateway http://127.0.0.1:$GATEWAY_PORT --idp $RUN/idp --mvpd $MVPD

== Ctrl-C stops both.
MSG
wait
