# samlgate — build, test, run and measure. `make test` and `make run` install what they need.
SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = "0" ] || echo sudo)
APT_PACKAGES := libxml2-dev libxmlsec1-dev libssl-dev pkg-config
SAMPLE := samples/response.xml
BIN := .build/release/samlgate

.PHONY: deps build release test run bench bench-check bench-thresholds bench-verify clean

## deps: install the system libraries (apt-get) when xmlsec1-openssl is not found.
deps:
	@if ! pkg-config --exists xmlsec1-openssl 2>/dev/null; then \
		echo "Installing $(APT_PACKAGES)"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(APT_PACKAGES); \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product samlgate

## test: the whole test suite (what CI runs).
test: deps
	$(SWIFT) test

## run: a test IdP signs a fresh response; samlgate verifies it and encodes it for the backend.
run: release
	@mkdir -p .run
	@[ -f .run/idp/cert.pem ] || $(BIN) idp keygen --out .run/idp >/dev/null
	@$(BIN) idp issue --key .run/idp/key.pem --cert .run/idp/cert.pem --mvpd Cablevision \
		--user alice@example.com --attr zip=10001 > .run/response.xml
	@echo "== samlgate idp issue: a signed response in .run/response.xml ($$(wc -c < .run/response.xml) bytes)"
	@echo "== samlgate verify --trust .run/idp/cert.pem .run/response.xml"
	@$(BIN) verify --trust .run/idp/cert.pem .run/response.xml
	@echo "== samlgate encode .run/response.xml (the value the backend expects):"
	@$(BIN) encode .run/response.xml | cut -c1-120; echo "   ..."
	@echo "== samlgate encode $(SAMPLE) | samlgate decode (the normalized XML):"
	@$(BIN) encode $(SAMPLE) | $(BIN) decode | head -c 300; echo " ..."

## bench: the benchmark package (separate, so tests never build ordo-one/benchmark).
bench: deps
	cd Benchmarks && $(SWIFT) package --allow-writing-to-package-directory benchmark $(BENCH_ARGS)

## bench-verify: samlgate's verifier against python-xmlsec, plus callgrind instruction counts.
bench-verify: deps
	cd Benchmarks && ./scripts/verify-compare.sh $(N)

## bench-check: compare a fresh run with the thresholds checked in under Benchmarks/Thresholds.
bench-check: deps
	cd Benchmarks && $(SWIFT) package benchmark thresholds check $(BENCH_ARGS)

## bench-thresholds: re-record the thresholds (after an intended performance change).
bench-thresholds: deps
	cd Benchmarks && $(SWIFT) package --allow-writing-to-package-directory benchmark thresholds update $(BENCH_ARGS)

clean:
	rm -rf .build Benchmarks/.build
