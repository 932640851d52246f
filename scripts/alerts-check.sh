#!/usr/bin/env bash
# make alerts-check: the shipped alert rules (deploy/monitoring/samlgate-alerts.yaml) in a real
# Prometheus, scraping real gateways, with real failures driven into them. Starts on loopback the
# reference upstream, redis-server, two gateways and Prometheus (scrape and evaluation every 1 s,
# the rules copied with only each `for:` shortened to ALERT_FOR, default 2s; the copy must pass
# promtool check rules), then scripts/load/alerts_check.py drives one condition after another
# and reads /api/v1/alerts: the alert of each condition must reach `firing`, the alerts whose
# condition is false must not, and no other alert may be pending or firing. Prints a table;
# exit 1 when an expectation fails. Everything runs under .run/alerts-check (ALERTS_DIR).
#
#   gw-a  upstreams: the reference upstream + a port nobody listens on, active health checks
#         (/reference/exchanges every 0.5 s), shared replay store in redis-server.
#   gw-b  upstream: the reference upstream, passive health only; one worker, queue 1;
#         metadata-cache (for a fetched source added later).
#   gw-c  serving TLS with a certificate valid 30 days, scraped on its plain probe listener
#         (plain-port); upstream: the reference upstream, passive health only.
#
# Covered (and what fires them):
#   SamlgateTrustStoreReloadFailing   a garbage cert.pem in gw-a's store, then SIGHUP (gw-b's good
#                                     reload at the same time must not fire it)
#   SamlgateTrustCertificateExpiring  a certificate valid 3 days added to gw-b's store + SIGHUP
#                                     (the 10-year Cablevision key must not fire it)
#   SamlgateTrustMetadataExpiring     metadata with validUntil in 3 days added + SIGHUP (one valid
#                                     30 days must not fire it)
#   SamlgateMetadataRefreshFailing    a metadata.url nobody answers added + SIGHUP (a source never
#                                     fetched: the alert's second branch)
#   SamlgateOverloadRefusals          heavy exchanges (300 KB signed responses) from 16
#   SamlgateWorkerQueueSaturated      connections at gw-b's single worker (not at gw-a)
#   SamlgateReplayStoreDown           redis-server stopped, then one exchange on gw-a
#   SamlgateNoHealthyUpstream         the reference upstream stopped: gw-a's health checks see it
#                                     without traffic; gw-b (passive health, no traffic) must not
#                                     fire, nor gw-a at start with one of its two upstreams down
#   SamlgateTLSReloadFailing          a key of another certificate published in gw-c's TLS files +
#                                     SIGHUP (the 30-day certificate keeps serving)
#   SamlgateTLSCertificateExpiresSoon a good pair valid 3 days published + SIGHUP (the 30-day one
#                                     before it must not fire it)
#   SamlgateTargetDown                gw-b killed (gw-a must not fire)
# Checked not firing only:
#   SamlgateExchangeRefusalsJump      compares the refused share over 10 minutes with the share
#                                     over the day: within a run shorter than 10 minutes both
#                                     windows hold the same samples, so it cannot fire (its
#                                     promtool unit tests cover it); the overload phase's refusals
#                                     must not fire it.
# Not covered: SamlgateMetadataRefreshFailing's first branch (no successful fetch for 3 h) needs
# hours; a source that failed after succeeding must not fire for an hour and is not waited for.
#
# Knobs: BIN (.build/release/samlgate), ALERT_FOR (2s), ALERTS_DIR (.run/alerts-check),
# FIRE_TIMEOUT (25: seconds an alert may take to fire).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/load/common.sh
BIN=${BIN:-.build/release/samlgate}
DIR=${ALERTS_DIR:-.run/alerts-check}
ALERT_FOR=${ALERT_FOR:-2s}
RULES=deploy/monitoring/samlgate-alerts.yaml
MVPD=Cablevision
require_tools alerts-check "make release; make deps installs promtool/prometheus and redis-server" prometheus promtool redis-server redis-cli curl python3 "$BIN"

DIR=$(fresh_dir "$DIR")
UPSTREAM_PORT=$(free_port) DEAD_PORT=$(free_port) REDIS_PORT=$(free_port)
GWA_PORT=$(free_port) GWB_PORT=$(free_port) PROM_PORT=$(free_port) GWC_PORT=$(free_port) GWC_PROBES=$(free_port)

upstream="" redis="" gwa="" gwb="" gwc="" prom="" driver=""
cleanup() {
    local pid
    for pid in $driver $prom $gwa $gwb $gwc $upstream $redis; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    # gw-b is disowned: wait for it by pid.
    for _ in $(seq 1 100); do [ -n "$gwb" ] && kill -0 "$gwb" 2>/dev/null || break; sleep 0.1; done
}
trap cleanup EXIT INT TERM

# The rules: a copy with only `for:` changed, and proof that nothing else was.
python3 - "$RULES" "$DIR/rules.yaml" "$ALERT_FOR" <<'PY'
import re, sys
source, target, short = sys.argv[1:]
pattern = re.compile(r"^(\s+for:\s*)(\S+)(\s*)$")
changed = 0
out = []
for line in open(source).read().splitlines(keepends=True):
    match = pattern.match(line)
    if match and match.group(2) not in ("0", "0s", "0m"):
        line = match.group(1) + short + match.group(3)
        changed += 1
    out.append(line)
open(target, "w").write("".join(out))
original = open(source).read().splitlines()
copy = "".join(out).splitlines()
assert len(original) == len(copy)
for a, b in zip(original, copy):
    assert a == b or (pattern.match(a) and pattern.match(b)), (a, b)
print(f"rules: {changed} for: lines shortened to {short} in {target}")
PY
promtool check rules "$DIR/rules.yaml" >/dev/null || { promtool check rules "$DIR/rules.yaml"; exit 1; }

# Keys, trust stores, and what the trust phase adds to them (staged-a, staged-b).
"$BIN" idp keygen --out "$DIR/idp" >/dev/null
"$BIN" idp keygen --out "$DIR/idp-short" --alg p256 --valid-days 3 >/dev/null
# A key of their own for each metadata MVPD: a key trusted for two MVPDs needs issuer files.
"$BIN" idp keygen --out "$DIR/idp-meta-short" --alg p256 >/dev/null
"$BIN" idp keygen --out "$DIR/idp-meta-long" --alg p256 >/dev/null
mkdir -p "$DIR/trust-a/$MVPD" "$DIR/trust-b/$MVPD" "$DIR/trust-c/$MVPD" "$DIR/tls-c" "$DIR/cache-b" \
    "$DIR/staged-a/Broken" "$DIR/staged-b/ShortCert" "$DIR/staged-b/ShortMeta" "$DIR/staged-b/LongMeta" "$DIR/staged-b/Fetched"
cp "$DIR/idp/cert.pem" "$DIR/trust-a/$MVPD/cert.pem"
cp "$DIR/idp/cert.pem" "$DIR/trust-b/$MVPD/cert.pem"
cp "$DIR/idp/cert.pem" "$DIR/trust-c/$MVPD/cert.pem"
# gw-c's TLS: a CA, the served pair (30 days), and what the TLS phase publishes: a pair valid 3
# days (staged-c/good-*) and the key of another certificate (staged-c/other.key).
tls_pair() { # name days
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$DIR/tls-c/$1.key" -out "$DIR/tls-c/$1.csr" \
        -subj /CN=localhost >/dev/null 2>&1
    openssl x509 -req -in "$DIR/tls-c/$1.csr" -CA "$DIR/tls-c/ca.pem" -CAkey "$DIR/tls-c/ca.key" -CAcreateserial -days "$2" \
        -out "$DIR/tls-c/$1.pem" >/dev/null 2>&1
}
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$DIR/tls-c/ca.key" -out "$DIR/tls-c/ca.pem" \
    -days 60 -subj "/CN=alerts-check CA" >/dev/null 2>&1
tls_pair served 30
tls_pair short 3
tls_pair other 30
cp "$DIR/tls-c/served.pem" "$DIR/tls-c/tls.pem"
cp "$DIR/tls-c/served.key" "$DIR/tls-c/tls.key"
printf 'not a certificate\n' > "$DIR/staged-a/Broken/cert.pem"
cp "$DIR/idp-short/cert.pem" "$DIR/staged-b/ShortCert/cert.pem"
"$BIN" idp metadata --cert "$DIR/idp-meta-short/cert.pem" --mvpd ShortMeta --valid-for $((3 * 86400)) > "$DIR/staged-b/ShortMeta/metadata.xml"
"$BIN" idp metadata --cert "$DIR/idp-meta-long/cert.pem" --mvpd LongMeta --valid-for $((30 * 86400)) > "$DIR/staged-b/LongMeta/metadata.xml"
echo "http://127.0.0.1:$DEAD_PORT/metadata.xml" > "$DIR/staged-b/Fetched/metadata.url"
echo 0.5 > "$DIR/staged-b/Fetched/metadata.refresh"
cp "$DIR/idp/cert.pem" "$DIR/staged-b/Fetched/metadata-signer.pem"
# Signed responses: heavy ones for the overload phase, small ones for single exchanges.
"$BIN" idp issue --key "$DIR/idp/key.pem" --cert "$DIR/idp/cert.pem" --mvpd "$MVPD" --user alerts@example.com \
    --ttl 3600 --encoded --pad-to 300000 --count 24 > "$DIR/heavy.txt" &
"$BIN" idp issue --key "$DIR/idp/key.pem" --cert "$DIR/idp/cert.pem" --mvpd "$MVPD" --user alerts@example.com \
    --ttl 3600 --encoded --count 4 > "$DIR/small.txt"
wait

cat > "$DIR/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
  evaluation_interval: 1s
rule_files:
  - $DIR/rules.yaml
scrape_configs:
  - job_name: samlgate
    metrics_path: /metrics
    static_configs:
      - targets: ["127.0.0.1:$GWA_PORT", "127.0.0.1:$GWB_PORT", "127.0.0.1:$GWC_PROBES"]
YML
promtool check config "$DIR/prometheus.yml" >/dev/null

redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --loglevel warning >"$DIR/redis.log" 2>&1 &
redis=$!
"$BIN" upstream --port "$UPSTREAM_PORT" --log-level error >/dev/null 2>"$DIR/upstream.log" &
upstream=$!
for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.05; done
wait_for "http://127.0.0.1:$UPSTREAM_PORT/"

"$BIN" serve --port "$GWA_PORT" --trust-store "$DIR/trust-a" --log-level error \
    --upstream "http://127.0.0.1:$UPSTREAM_PORT" --upstream "http://127.0.0.1:$DEAD_PORT" \
    --upstream-health-path /reference/exchanges --upstream-health-interval 0.5 \
    --replay-store "redis://127.0.0.1:$REDIS_PORT" --throttle-exchanges off >/dev/null 2>"$DIR/gw-a.log" &
gwa=$!
"$BIN" serve --port "$GWB_PORT" --trust-store "$DIR/trust-b" --log-level error \
    --upstream "http://127.0.0.1:$UPSTREAM_PORT" --workers 1 --queue 1 --throttle-exchanges off \
    --metadata-cache "$DIR/cache-b" --metadata-timeout 1 >/dev/null 2>"$DIR/gw-b.log" &
gwb=$!
disown "$gwb"  # killed with SIGKILL by the target phase: no "Killed" line from bash
"$BIN" serve --port "$GWC_PORT" --plain-port "$GWC_PROBES" --trust-store "$DIR/trust-c" --log-level error \
    --upstream "http://127.0.0.1:$UPSTREAM_PORT" --throttle-exchanges off --tls-poll 0 \
    --tls-certificate "$DIR/tls-c/tls.pem" --tls-key "$DIR/tls-c/tls.key" >/dev/null 2>"$DIR/gw-c.log" &
gwc=$!
wait_for "http://127.0.0.1:$GWA_PORT/readyz"
wait_for "http://127.0.0.1:$GWB_PORT/readyz"
wait_for "http://127.0.0.1:$GWC_PROBES/readyz"

prometheus --config.file="$DIR/prometheus.yml" --storage.tsdb.path="$DIR/tsdb" \
    --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$DIR/prometheus.log" 2>&1 &
prom=$!
for _ in $(seq 1 200); do curl -fsS "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null 2>&1 && break; sleep 0.1; done

# In the background, so that a signal to this script runs cleanup at once (bash runs a trap only
# after its foreground command ends).
python3 scripts/load/alerts_check.py --dir "$DIR" --prometheus "http://127.0.0.1:$PROM_PORT" \
    --gw-a "$GWA_PORT:$gwa" --gw-b "$GWB_PORT:$gwb" --gw-c "$GWC_PROBES:$gwc" --upstream-pid "$upstream" --redis-pid "$redis" \
    --mvpd "$MVPD" --fire-timeout "${FIRE_TIMEOUT:-25}" &
driver=$!
wait "$driver"
