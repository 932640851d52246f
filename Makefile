# samlgate — build, test, run and measure. `make test` and `make run` install what they need.
SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = "0" ] || echo sudo)
APT_PACKAGES := libxml2-dev libxmlsec1-dev libssl-dev zlib1g-dev libjemalloc-dev pkg-config python3-venv gzip redis-server \
	openssl curl nghttp2-client
SAMPLE := samples/response.xml
BIN := .build/release/samlgate
# What make format-check lints and make format rewrites.
FORMATTED := Package.swift Sources Tests Benchmarks/Package.swift Benchmarks/Benchmarks Benchmarks/Drivers Fuzz/Package.swift Fuzz/Sources

.PHONY: deps deps-load build release test format-check format openapi-check docs-check deploy-check monitoring-check run demo load load-compare header-costs alerts-check tracing-check tls-check tls-compare h2-attacks h2-unread http-diff load-mallocs load-scale load-replay-store soak faults sanitize cluster-check stream-check bench bench-compare bench-check bench-thresholds bench-verify fuzz-build fuzz fuzz-all clean

## deps: install the system libraries (apt-get) when xmlsec1-openssl, zlib or jemalloc is not found,
## redis-server (the shared replay store's tests start their own), openssl, curl and nghttp2-client
## (nghttp, h2load: make tls-check, make tls-compare); promtool (Debian's prometheus package) for
## make monitoring-check.
deps:
	@if ! pkg-config --exists xmlsec1-openssl zlib jemalloc 2>/dev/null || ! command -v gzip >/dev/null || ! python3 -c 'import ensurepip, venv' 2>/dev/null \
		|| ! [ -x /usr/bin/redis-server ] || ! command -v openssl >/dev/null || ! command -v curl >/dev/null || ! command -v nghttp >/dev/null; then \
		echo "Installing $(APT_PACKAGES)"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(APT_PACKAGES); \
	fi
	@if ! command -v promtool >/dev/null; then \
		echo "Installing prometheus (promtool)"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends prometheus; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product samlgate

## deps-load: wrk and nginx (the anchor of make load-compare), haproxy and caddy (its other peers;
## where the distribution has no package for them, load-compare leaves them out).
deps-load: deps
	@if ! command -v wrk >/dev/null || ! [ -x /usr/sbin/nginx ]; then \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq wrk nginx-light; \
	fi
	@if ! [ -x /usr/sbin/haproxy ] || ! [ -x /usr/bin/caddy ]; then \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq haproxy caddy \
			|| echo "haproxy or caddy not installed: make load-compare runs without them"; \
	fi

## test: the whole test suite (what CI runs): Swift tests (the verifier's arena in guard mode:
## a closed verification's memory is inaccessible, docs/security.md), the OpenAPI document check, the
## documentation check (links, command lines against the built CLI, error codes against the sources),
## then the deployment check (Kubernetes manifests, checkov, hadolint; offline), the monitoring
## check (dashboard, alert rules and their promtool tests), the alert rules in a real Prometheus
## against the debug build (alerts-check, under a minute), its span exports read by
## OpenTelemetry's own classes (tracing-check), and TLS and HTTP/2 against real clients and
## sslyze (tls-check).
test: deps
	$(MAKE) format-check
	SAMLGATE_XML_ARENA=guard $(SWIFT) test
	$(MAKE) openapi-check
	$(MAKE) docs-check
	$(MAKE) deploy-check
	$(MAKE) monitoring-check
	BIN=.build/debug/samlgate ./scripts/alerts-check.sh
	BIN=.build/debug/samlgate ./scripts/tracing-check.sh
	BIN=.build/debug/samlgate ./scripts/tls-check.sh

## openapi-check: validate docs/openapi.yaml (openapi-spec-validator in .build/tools-venv).
openapi-check:
	./scripts/check-openapi.sh

## deploy-check: deploy/kubernetes against the Kubernetes schemas, checkov's security checks, and
## deploy/Dockerfile through hadolint (tools in .build/tools-venv, installed once).
deploy-check:
	./scripts/check-deploy.sh

## monitoring-check: deploy/monitoring's Grafana dashboard and Prometheus alert rules: structure,
## metric names against docs/gateway.md, promtool check rules and promtool test rules (offline).
monitoring-check:
	./scripts/check-monitoring.sh

## format-check: swift format lint (.swift-format: line length 150, the rules we keep) over every
## Swift file; `make format` rewrites them.
format-check:
	$(SWIFT) format lint --strict --recursive $(FORMATTED)

format:
	$(SWIFT) format format --in-place --recursive $(FORMATTED)

## docs-check: links, samlgate command lines and error codes in README.md and docs/ (needs .build/debug/samlgate).
docs-check:
	./scripts/check-docs.sh

## run: the reference upstream and the gateway on loopback (test IdP and trust store in .run/),
## with a ready-to-paste curl; Ctrl-C stops both.
run: release
	./scripts/run-local.sh

## demo: samlgate demo (own reference upstream, gateway and test IdP; DEMO_ARGS="--flow v2 --scenario denied" …).
demo: deps build
	$(SWIFT) run --skip-build samlgate demo $(DEMO_ARGS)

## load: wrk against gateway + reference upstream with unique signed 8 KB responses.
load: release deps-load
	./scripts/load.sh

## load-compare: nginx, HAProxy, Caddy and the NIO floor passing requests through, samlgate
## pass-through and v1 exchange, in interleaved rounds at 1/16/64/256 connections, for two
## workloads (form: ~11 KB form bodies; get204: GETs answered 204); a table per workload,
## .run/load/compare.csv and plots (ROUNDS=3 DURATION=5 WORKLOADS="form get204"
## PEERS="nginx haproxy caddy floor").
load-compare: release deps-load
	./scripts/load-compare.sh

## header-costs: the gateway's CPU per request for the worst spelling of each header it parses,
## against a junk header of the same size (ROUNDS=5 REQUESTS=200 SIZE=40000; BASELINE_BIN=<another build>).
header-costs: release
	./scripts/header-costs.sh

## alerts-check: the shipped alert rules in a real Prometheus (rules copied, only `for:` shortened to
## ALERT_FOR=2s) scraping two gateways, with failures driven into them (broken trust store, expiring
## keys, overload, Redis, upstream and a gateway stopped): each alert fires, the others stay silent.
alerts-check: release
	./scripts/alerts-check.sh

## tracing-check: the gateway's OTLP span exports read by OpenTelemetry's own protobuf classes
## (opentelemetry-proto, in .build/tools-venv): ids, parents, kinds, typed attributes, trace state.
tracing-check: build
	BIN=.build/debug/samlgate ./scripts/tracing-check.sh

## tls-check: TLS and HTTP/2 against clients nobody here wrote — curl (--http2, --http1.1, h2c),
## httpx (HTTP/2), nghttp, openssl s_client: an exchange and its token each; a required client
## certificate; sslyze on the defaults (Mozilla's intermediate profile). Its own CA; under 30 s.
tls-check: build
	BIN=.build/debug/samlgate ./scripts/tls-check.sh

## tls-compare: TLS to clients, samlgate against nginx with the same certificate and profile and
## against the NIO floor (swift-nio-ssl and swift-nio-http2 alone, with a child channel per stream
## and with the streams at the connection), all in front of an nginx answering 204, alternated:
## CPU per request on kept-alive connections (wrk HTTP/1.1, h2load HTTP/2), full handshakes per
## CPU second (h2load, HTTP/1.1 and h2), one client's full and resumed TLS 1.3 handshakes per CPU
## second (openssl s_time -new and -reuse; a proxy that does not resume fails the run); and v1
## exchanges over HTTP/1.1 and HTTP/2 (httpx, each with a signed response of its own), CPU per
## exchange. FLOOR=0 leaves the floors out; WORKLOADS chooses (h1-kept h2-kept h1-new h2-new
## h1-full1 h1-resumed x1-kept x2-kept).
tls-compare: release deps-load
	./scripts/tls-compare.sh

## h2-attacks: what each known HTTP/2 attack (rapid reset, CONTINUATION flood, PING and SETTINGS
## floods, streams over the limit, a header list over it) costs a release gateway before it
## closes the connection: CPU per attacking connection, beside one request's (ROUNDS=20).
h2-attacks: release
	./scripts/h2-attacks.sh

## h2-unread: what HTTP/2 clients that never read their answers (every stream window at 0, 100
## streams each) cost samlgate, nginx and HAProxy in resident memory, per connection and answer
## size, h2c on loopback (CONNECTIONS=8 ROUNDS=3 SIZES="1024 65536 1048576" PEERS=...).
h2-unread: release
	./scripts/h2-unread.sh

## http-diff: ~295 odd or malformed HTTP/1.1 requests (raw sockets) through nginx and the gateway to a
## byte-logging backend; the differences that matter (samlgate stricter, laxer, content differs) and
## a summary line, every case in .run/http-diff/results.jsonl (BIN=<another build>, ONLY=<case ids>).
http-diff: release deps-load
	./scripts/http-diff.sh

## load-mallocs: heap allocations per proxied request and per v1 exchange, end to end (jemalloc's
## statistics, thread caches off); BASELINE_BIN=<another build> alternated with it (ROUNDS=2).
load-mallocs: release deps-load
	./scripts/load-mallocs.sh

## load-scale: nginx and the gateway pinned to K = 1, 2, 4 … cores (the load on the rest), in
## interleaved rounds; .run/load/scale.csv and scale.png (ROUNDS=3 DURATION=5 CONNECTIONS=64).
load-scale: release deps-load
	./scripts/load-scale.sh

## soak: gateway + reference upstream under a steady mix (proxied, exchanges, replays, forged and
## broken responses, local answers) for SOAK_SECONDS (600); RSS, descriptors, threads sampled
## every 5 s into .run/soak/soak.csv and plotted (.run/soak/soak.png); exit 1 when a goal is missed.
soak: release deps-load
	./scripts/soak.sh

## faults: failures injected into real processes: the upstream killed under load and restarted,
## SIGHUP with a broken trust store, SIGTERM under load, batch --out on a full disk (tmpfs, root).
faults: release deps-load
	./scripts/faults.sh

## sanitize: the test suite under ASan + UBSan (.build-asan), the concurrency suites under TSan
## (.build-tsan); ONLY=asan|tsan runs one. Not part of make test (two more full builds).
sanitize: deps
	./scripts/sanitize.sh

## load-replay-store: the exchange load with replay-store memory, one Redis, one Redis with a replica
## and replay-store-replicas 1, and a 3-primary Redis Cluster (all on loopback) in alternating rounds:
## requests/s, p99, gateway CPU per request, Redis CPU per exchange.
load-replay-store: release deps-load
	./scripts/load-replay-store.sh

## cluster-check: Redis, two gateway replicas and nginx round-robin on loopback: a replay through
## the other replica refused, Redis down (closed 503, open accepted), Redis back, a replica killed under
## load; then a Redis primary killed under exchanges behind Sentinel and in a Redis Cluster, with
## replay-store-replicas 0 and 1: 503s, their window, records lost (scripts/redis-failover.sh).
cluster-check: release deps-load
	./scripts/cluster-check.sh
	./scripts/redis-failover.sh

## stream-check: a 200 MB answer and a 200 MB upload through the gateway, its memory sampled.
stream-check: release
	./scripts/stream-check.sh

## bench: the benchmark package (separate, so tests never build ordo-one/benchmark).
bench: deps
	cd Benchmarks && $(SWIFT) package --allow-writing-to-package-directory benchmark $(BENCH_ARGS)

## bench-compare: this build against OLD=<binary or commit>, CPU time, the two alternated: batch
## encode and verify per record (one worker), then load-compare's end-to-end runs (ROUNDS=5).
bench-compare: release deps-load
	OLD=$(OLD) ./scripts/bench-compare.sh

## bench-verify: samlgate's verifier against python-xmlsec, plus callgrind instruction counts.
bench-verify: deps
	cd Benchmarks && ./scripts/verify-compare.sh $(N)

## bench-check: compare a fresh run with the thresholds checked in under Benchmarks/Thresholds.
bench-check: deps
	SWIFT=$(SWIFT) ./Benchmarks/scripts/bench-check.sh $(BENCH_ARGS)

## bench-thresholds: re-record the thresholds (after an intended performance change).
bench-thresholds: deps
	cd Benchmarks && $(SWIFT) package --allow-writing-to-package-directory benchmark thresholds update $(BENCH_ARGS)

## fuzz-build: the libFuzzer targets (Fuzz/, a separate package: make test and CI never build it),
## -sanitize=fuzzer,address, into Fuzz/.build. See docs/robustness.md.
fuzz-build: deps
	SWIFT="$(SWIFT)" ./scripts/fuzz.sh build

## fuzz: one target for SECONDS (TARGET=canonicalization SECONDS=600): new corpus entries in
## Fuzz/.build/corpus/<target>, findings in Fuzz/Findings/<target>/, figures printed at the end.
TARGET ?= canonicalization
SECONDS ?= 60
fuzz: fuzz-build
	./scripts/fuzz.sh run $(TARGET) $(SECONDS)

## fuzz-all: every target in turn, SECONDS each.
fuzz-all: fuzz-build
	./scripts/fuzz.sh all $(SECONDS)

clean:
	rm -rf .build Benchmarks/.build Fuzz/.build
	git worktree prune
