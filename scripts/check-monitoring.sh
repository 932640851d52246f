#!/usr/bin/env bash
# The monitoring checks of `make test`, offline: deploy/monitoring's Grafana dashboard and
# Prometheus alert rules are well formed, use only metrics documented in docs/gateway.md, parse
# (promtool check rules, the dashboard's PromQL included) and pass their unit tests (promtool test
# rules); with .build/fresh-scrape.txt (a fresh gateway's /metrics, written by `swift test`), every
# series they select exists before any traffic. promtool is Debian's prometheus package (`make
# deps` installs it). Details in check_monitoring.py.
# Usage: scripts/check-monitoring.sh [--promtool PATH]
#        scripts/check-monitoring.sh --list-metrics    the metric names used, one per line
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/tools-venv.sh
tools_venv monitoring yaml=pyyaml

exec "$TOOLS_PYTHON" scripts/check_monitoring.py "$@"
