#!/usr/bin/env bash
# The documentation checks of `make test` (after `swift test`, which builds .build/debug/samlgate):
# relative links in the Markdown files resolve inside the repository, `samlgate …` command lines
# name real verbs and flags (the built CLI's --help is the oracle), docs/cli.md and
# docs/configuration.md cover every verb, flag and setting, and docs/errors.md and
# docs/openapi.yaml list exactly the error codes the sources can produce. Details in check_docs.py.
# Usage: scripts/check-docs.sh [--samlgate PATH] [--only links,cli,codes]
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/tools-venv.sh
tools_venv docs yaml=pyyaml

exec "$TOOLS_PYTHON" scripts/check_docs.py "$@"
