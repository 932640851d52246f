#!/usr/bin/env bash
# make tls-check: the TLS and HTTP/2 listener against clients and scanners nobody here wrote.
# Makes its own CA, server and client certificates (openssl), starts on loopback the reference
# upstream and three gateways — TLS with a probe listener (the defaults), TLS requiring a client
# certificate, plain with h2c — then checks, each a v1 exchange and its token passed through
# where a client can send a form: curl --http2 and --http1.1, httpx with HTTP/2, nghttp, openssl
# s_client; the client certificate required; h2c with prior knowledge (curl); the scanner sslyze
# on the defaults (no protocol below TLS 1.2, only ECDHE+AEAD suites, no known vulnerability,
# Mozilla's "intermediate" profile met except the trust path of a test CA). Exit 1 when one fails.
# Knobs: BIN (.build/debug/samlgate), TLS_DIR (.run/tls-check).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/load/common.sh
. scripts/tools-venv.sh
BIN=${BIN:-.build/debug/samlgate}
DIR=$(fresh_dir "${TLS_DIR:-.run/tls-check}")
MVPD=Cablevision
[ -x "$BIN" ] || { echo "tls-check: $BIN is missing (make build)" >&2; exit 1; }
for tool in curl nghttp openssl; do
    command -v "$tool" >/dev/null || { echo "tls-check: $tool is missing (make deps installs it)" >&2; exit 1; }
done
tools_venv tls-check h2=h2 httpx=httpx sslyze=sslyze

UPSTREAM_PORT=$(free_port) TLS_PORT=$(free_port) PROBE_PORT=$(free_port) MTLS_PORT=$(free_port) H2C_PORT=$(free_port)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

# The certificates: a CA, the server's (localhost and 127.0.0.1), a client's.
pki() { openssl "$@" >/dev/null 2>&1; }
pki req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$DIR/ca.key" -out "$DIR/ca.pem" -days 2 -subj "/CN=tls-check CA"
issue() { # name subject extensions
    pki req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$DIR/$1.key" -out "$DIR/$1.csr" -subj "$2"
    printf '%b' "$3" >"$DIR/$1.ext"
    pki x509 -req -in "$DIR/$1.csr" -CA "$DIR/ca.pem" -CAkey "$DIR/ca.key" -CAcreateserial -out "$DIR/$1.pem" -days 2 -extfile "$DIR/$1.ext"
}
issue server "/CN=localhost" "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
issue client "/O=Example Streaming/CN=check-app" "extendedKeyUsage=clientAuth\n"

"$BIN" idp keygen --out "$DIR/idp" >/dev/null
mkdir -p "$DIR/trust/$MVPD"
cp "$DIR/idp/cert.pem" "$DIR/trust/$MVPD/cert.pem"

"$BIN" upstream --port "$UPSTREAM_PORT" --log-level error >/dev/null 2>&1 &
pids+=($!)
common=(--upstream "http://127.0.0.1:$UPSTREAM_PORT" --trust-store "$DIR/trust" --log-level warning --throttle-exchanges off)
tls=(--tls-certificate "$DIR/server.pem" --tls-key "$DIR/server.key")
"$BIN" serve --port "$TLS_PORT" --plain-port "$PROBE_PORT" "${tls[@]}" "${common[@]}" >/dev/null 2>"$DIR/gateway.log" &
pids+=($!)
"$BIN" serve --port "$MTLS_PORT" "${tls[@]}" --tls-client-ca "$DIR/ca.pem" --tls-client-auth require "${common[@]}" \
    >/dev/null 2>"$DIR/gateway-mtls.log" &
pids+=($!)
"$BIN" serve --port "$H2C_PORT" --h2c "${common[@]}" >/dev/null 2>"$DIR/gateway-h2c.log" &
pids+=($!)
wait_for "http://127.0.0.1:$UPSTREAM_PORT/"
wait_for "http://127.0.0.1:$PROBE_PORT/readyz"
wait_for "http://127.0.0.1:$H2C_PORT/readyz"
for _ in $(seq 1 100); do
    curl -s -o /dev/null --cacert "$DIR/ca.pem" --cert "$DIR/client.pem" --key "$DIR/client.key" "https://localhost:$MTLS_PORT/healthz" && break
    sleep 0.1
done

checks=0 failed=0
pass() { checks=$((checks + 1)); echo "  ok   $1"; }
fail() { checks=$((checks + 1)); failed=$((failed + 1)); echo "  FAIL $1: $2" >&2; }
saml() { "$BIN" idp issue --key "$DIR/idp/key.pem" --cert "$DIR/idp/cert.pem" --mvpd "$MVPD" --user check@example.com --encoded; }
form() { echo "requestor=REF&deviceId=$1&mvpd=$MVPD&deviceType=iOS&SAMLResponse=$(saml)"; }
base="https://localhost:$TLS_PORT"

# curl, each protocol: the exchange (204) and its token passed through (200), in the version asked for.
for version in 2 1.1; do
    device="curl-http$version"
    got=$(curl -sS -o /dev/null -w '%{http_version} %{http_code}' --http"$version" --cacert "$DIR/ca.pem" \
        -H 'Content-Type: application/x-www-form-urlencoded' --data "$(form "$device")" "$base/api/v1/tokens/authn" || true)
    token=$(curl -sS -o /dev/null -w '%{http_version} %{http_code}' --http"$version" --cacert "$DIR/ca.pem" \
        "$base/api/v1/tokens/authn?requestor=REF&deviceId=$device" || true)
    if [ "$got" = "$version 204" ] && [ "$token" = "$version 200" ]; then pass "curl --http$version: exchange and pass-through"
    else fail "curl --http$version" "exchange '$got', pass-through '$token'"; fi
done

# httpx with HTTP/2 (the h2 package), one connection for both.
if out=$("$TOOLS_PYTHON" - "$base" "$DIR/ca.pem" "$(form httpx-device)" <<'PY' 2>&1
import sys, httpx
base, ca, body = sys.argv[1:4]
with httpx.Client(http2=True, verify=ca) as client:
    exchange = client.post(base + "/api/v1/tokens/authn", content=body, headers={"Content-Type": "application/x-www-form-urlencoded"})
    token = client.get(base + "/api/v1/tokens/authn", params={"requestor": "REF", "deviceId": "httpx-device"})
    print(exchange.http_version, exchange.status_code, token.http_version, token.status_code)
    assert (exchange.http_version, exchange.status_code, token.status_code) == ("HTTP/2", 204, 200)
PY
); then pass "httpx http2: exchange and pass-through ($out)"; else fail "httpx http2" "$out"; fi

# HTTP/2 over TLS, two requests, then a TCP half-close with no close_notify (as a client that
# shuts its sending side does): both are answered before the connection closes.
if out=$("$TOOLS_PYTHON" - "$TLS_PORT" "$DIR/ca.pem" <<'PY' 2>&1
import socket, ssl, sys
import h2.config, h2.connection, h2.events
port, ca = int(sys.argv[1]), sys.argv[2]
context = ssl.create_default_context(cafile=ca)
context.set_alpn_protocols(["h2"])
tls = context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10), server_hostname="localhost")
assert tls.selected_alpn_protocol() == "h2", tls.selected_alpn_protocol()
connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
connection.initiate_connection()
for stream in (1, 3):
    connection.send_headers(stream, [(":method", "GET"), (":scheme", "https"), (":authority", "localhost"),
                                     (":path", "/api/v1/config/REF")], end_stream=True)
tls.sendall(connection.data_to_send())
socket.socket.shutdown(tls, socket.SHUT_WR)  # the socket's FIN, below TLS: no close_notify
statuses = {}
while True:
    try:
        data = tls.recv(65536)
    except (ssl.SSLError, OSError):
        break
    if not data:
        break
    for event in connection.receive_data(data):
        if isinstance(event, h2.events.ResponseReceived):
            statuses[event.stream_id] = dict(event.headers)[b":status"].decode()
    connection.data_to_send()  # acknowledgements the half-closed side cannot send
print(statuses)
assert statuses == {1: "200", 3: "200"}, statuses
PY
); then pass "HTTP/2 over TLS, half-closed without close_notify: both streams answered ($out)"; else fail "TLS half-close" "$out"; fi

# nghttp (nghttp2's own client): the exchange posted from a file, then the token.
form nghttp-device >"$DIR/nghttp-form"
# (nghttp 1.52 has no option for a CA: it reports, and does not refuse, a certificate it cannot verify.)
ex=$(nghttp -v -H 'content-type: application/x-www-form-urlencoded' -d "$DIR/nghttp-form" \
    "$base/api/v1/tokens/authn" 2>&1 | grep -c ':status: 204' || true)
tk=$(nghttp -v "$base/api/v1/tokens/authn?requestor=REF&deviceId=nghttp-device" 2>&1 | grep -c ':status: 200' || true)
if [ "$ex" -ge 1 ] && [ "$tk" -ge 1 ]; then pass "nghttp: exchange and pass-through"; else fail "nghttp" "exchange $ex, pass-through $tk"; fi

# openssl s_client, HTTP/1.1 written by hand: the exchange and its token on one connection.
body=$(form s-client-device)
answers=$(printf 'POST /api/v1/tokens/authn HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %s\r\n\r\n%sGET /api/v1/tokens/authn?requestor=REF&deviceId=s-client-device HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' "${#body}" "$body" | timeout 10 openssl s_client -quiet -alpn http/1.1 -connect "127.0.0.1:$TLS_PORT" -servername localhost \
    -CAfile "$DIR/ca.pem" -verify_return_error 2>/dev/null | grep -a '^HTTP/1.1' | tr -d '\r' | tr '\n' ' ' || true)
if [ "$answers" = "HTTP/1.1 204 No Content HTTP/1.1 200 OK " ]; then pass "openssl s_client: exchange and pass-through"
else fail "openssl s_client" "'$answers'"; fi

# The client certificate required: refused without, served with (the exchange too).
without=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$DIR/ca.pem" "https://localhost:$MTLS_PORT/api/v1/config/REF" || true)
with=$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$DIR/ca.pem" --cert "$DIR/client.pem" --key "$DIR/client.key" \
    -H 'Content-Type: application/x-www-form-urlencoded' --data "$(form mtls-device)" "https://localhost:$MTLS_PORT/api/v1/tokens/authn" || true)
if [ "$without" = 000 ] && [ "$with" = 204 ]; then pass "client certificate required: refused without one, served with one"
else fail "client certificate" "without: $without, with: $with"; fi

# h2c with prior knowledge on the plain listener.
got=$(curl -sS -o /dev/null -w '%{http_version} %{http_code}' --http2-prior-knowledge -H 'Content-Type: application/x-www-form-urlencoded' \
    --data "$(form h2c-device)" "http://127.0.0.1:$H2C_PORT/api/v1/tokens/authn" || true)
if [ "$got" = "2 204" ]; then pass "curl --http2-prior-knowledge (h2c): exchange"; else fail "h2c" "'$got'"; fi

# The probe listener: probes in plain HTTP, the API refused there.
ready=$(curl -sS "http://127.0.0.1:$PROBE_PORT/readyz" || true)
api=$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PROBE_PORT/api/v1/config/REF" || true)
if [[ $ready == *'"tls":"ok"'* ]] && [ "$api" = 403 ]; then pass "probe listener: /readyz reports TLS, the API answered 403"
else fail "probe listener" "readyz '$ready', API $api"; fi

# sslyze on the defaults.
"$TOOLS_PYTHON" -m sslyze --json_out="$DIR/sslyze.json" --mozilla_config=intermediate --certinfo_ca_file "$DIR/ca.pem" \
    "localhost:$TLS_PORT" >"$DIR/sslyze.txt" 2>&1 || true
if out=$("$TOOLS_PYTHON" - "$DIR/sslyze.json" "$DIR/sslyze.txt" <<'PY' 2>&1
import json, sys
result = json.load(open(sys.argv[1]))["server_scan_results"][0]["scan_result"]
def accepted(name):
    return [c["cipher_suite"]["name"] for c in result[name]["result"]["accepted_cipher_suites"]]
problems = []
for old in ["ssl_2_0", "ssl_3_0", "tls_1_0", "tls_1_1"]:
    if accepted(old + "_cipher_suites"):
        problems.append(old + " accepted")
tls12, tls13 = accepted("tls_1_2_cipher_suites"), accepted("tls_1_3_cipher_suites")
if not tls13:
    problems.append("no TLS 1.3")
for suite in tls12:
    if not suite.startswith("TLS_ECDHE_") or not ("GCM" in suite or "CHACHA20" in suite):
        problems.append("weak TLS 1.2 suite " + suite)
r = lambda name: result[name]["result"]
if r("heartbleed")["is_vulnerable_to_heartbleed"]: problems.append("heartbleed")
if r("openssl_ccs_injection")["is_vulnerable_to_ccs_injection"]: problems.append("CCS injection")
if r("robot")["robot_result"] not in ("NOT_VULNERABLE_NO_ORACLE", "NOT_VULNERABLE_RSA_NOT_SUPPORTED"): problems.append("ROBOT")
if r("tls_compression")["supports_compression"]: problems.append("compression (CRIME)")
if not r("tls_fallback_scsv")["supports_fallback_scsv"]: problems.append("no TLS_FALLBACK_SCSV")
renegotiation = r("session_renegotiation")
if renegotiation["is_vulnerable_to_client_renegotiation_dos"] or not renegotiation["supports_secure_renegotiation"]:
    problems.append("renegotiation")
# Mozilla's intermediate profile: the only finding allowed is the test CA's trust path.
text = open(sys.argv[2]).read()
if "FAILED - Not compliant" in text:
    findings = [line.strip() for line in text.split("Not compliant.", 1)[1].splitlines() if line.strip().startswith("*")]
    others = [f for f in findings if not f.startswith("* certificate_path_validation")]
    problems += others
print("TLS 1.2:", ", ".join(tls12), "| TLS 1.3:", ", ".join(tls13))
if problems:
    print("; ".join(problems))
    sys.exit(1)
PY
); then pass "sslyze: $out"; else fail "sslyze" "$out"; fi

# What the gateway counted of all this.
metrics=$(curl -sS "http://127.0.0.1:$PROBE_PORT/metrics")
for series in 'samlgate_tls_handshakes_total{version="tls1.3",alpn="h2"}' 'samlgate_tls_handshakes_total{version="tls1.3",alpn="http/1.1"}' \
    'samlgate_tls_certificate_not_after_timestamp_seconds'; do
    value=$(grep -F "$series " <<<"$metrics" | grep -v '^#' | awk '{print $2}')
    if [ -n "$value" ] && [ "${value%%.*}" != 0 ]; then pass "metric $series = $value"; else fail "metric $series" "'$value'"; fi
done

echo "tls-check: $((checks - failed))/$checks checks passed"
[ "$failed" = 0 ]
