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

## run: demonstrate the encoder on the bundled sample response.
run: release
	@echo "== samlgate encode $(SAMPLE) (the cookbook value the backend expects):"
	@$(BIN) encode $(SAMPLE)
	@echo "== round trip through samlgate decode (the normalized XML):"
	@$(BIN) encode $(SAMPLE) | $(BIN) decode | head -c 400; echo " ..."

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
