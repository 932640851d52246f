#!/usr/bin/env bash
# Validates docs/openapi.yaml (OpenAPI 3.0) with openapi-spec-validator, and checks that the
# gateway's error codes in the spec match the contract below exactly: every (status, code) pair
# is documented on some route, and no route documents a code the contract does not have.
# Usage: scripts/check-openapi.sh [SPEC]    (default docs/openapi.yaml)
set -euo pipefail
cd "$(dirname "$0")/.."

SPEC="${1:-docs/openapi.yaml}"

if [ ! -f "$SPEC" ]; then
    echo "openapi: $SPEC not found" >&2
    exit 1
fi

. scripts/tools-venv.sh
tools_venv openapi openapi_spec_validator=openapi-spec-validator yaml=pyyaml

"$TOOLS_PYTHON" - "$SPEC" <<'PY'
import sys
import yaml
from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename

path = sys.argv[1]

# The gateway's own error codes, by HTTP status (the contract the Swift code implements).
CONTRACT = {
    400: """missing_parameter invalid_parameter_value invalid_request_target invalid_request
            duplicate_header duplicate_parameter unknown_mvpd invalid_utf8
            malformed_percent_encoding malformed_base64 unrecognized_saml_form double_encoded
            forbidden_dtd forbidden_markup too_large too_deep too_many_attributes too_many_namespaces too_many_nodes
            malformed_xml unsupported_encrypted_assertion malformed_request VSA503 APPL_ERROR""",
    401: """signature_missing signature_invalid key_not_trusted reference_mismatch
            algorithm_not_allowed duplicate_id assertion_count status_not_success issuer_mismatch
            wrong_audience not_yet_valid expired replayed unbounded_validity
            normalization_changes_document unsigned_content APPL_ERROR""",
    403: "VSA403 VSA404",
    405: "method_not_allowed",
    408: "header_timeout client_timeout",
    413: "body_too_large",
    415: "unsupported_media_type",
    500: "internal_error",
    502: "upstream_unavailable upstream_response_invalid",
    503: "overloaded replay_cache_full metadata_expired metadata_unavailable replay_store_unavailable",
    504: "upstream_timeout",
}
CONTRACT = {status: set(codes.split()) for status, codes in CONTRACT.items()}

failures = []

try:
    spec_dict, base_uri = read_from_filename(path)
    validate(spec_dict, base_uri=base_uri)
except Exception as error:  # noqa: BLE001 - report any validator or reader failure
    # jsonschema errors print the whole instance; keep the message and where it is.
    where = getattr(error, "json_path", None)
    message = getattr(error, "message", None) or str(error)
    print(f"openapi: {path} is not a valid OpenAPI document: {message}"
          + (f" (at {where})" if where else ""), file=sys.stderr)
    sys.exit(1)

with open(path, encoding="utf-8") as handle:
    text = handle.read()
spec = yaml.safe_load(text)


def resolve(node):
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        if not ref.startswith("#/"):
            raise SystemExit(f"openapi: external $ref not supported by this check: {ref}")
        node = spec
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def code_enums(schema, seen=()):
    """Every value of an `enum` on a `code` property, through $ref and allOf/oneOf/anyOf."""
    schema = resolve(schema)
    if not isinstance(schema, dict) or id(schema) in seen:
        return set()
    seen = seen + (id(schema),)
    found = set()
    code = resolve((schema.get("properties") or {}).get("code", {}))
    if isinstance(code, dict):
        found |= {str(value) for value in code.get("enum", [])}
    for key in ("allOf", "oneOf", "anyOf"):
        for sub in schema.get(key, []):
            found |= code_enums(sub, seen)
    return found


documented = {}  # status -> codes documented on some operation
methods = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
for route, item in (spec.get("paths") or {}).items():
    for method, operation in resolve(item).items():
        if method not in methods:
            continue
        for status, response in (operation.get("responses") or {}).items():
            response = resolve(response)
            for media in (response.get("content") or {}).values():
                codes = code_enums(media.get("schema", {}))
                if not codes:
                    continue
                if not str(status).isdigit():
                    failures.append(f"{method.upper()} {route}: error codes under '{status}' response")
                    continue
                status = int(status)
                documented.setdefault(status, set()).update(codes)
                unknown = codes - CONTRACT.get(status, set())
                if unknown:
                    failures.append(f"{method.upper()} {route} {status}: codes not in the contract: "
                                    + ", ".join(sorted(unknown)))

for status, codes in sorted(CONTRACT.items()):
    missing = codes - documented.get(status, set())
    if missing:
        failures.append(f"{status}: contract codes no route documents: " + ", ".join(sorted(missing)))

for code in sorted(set().union(*CONTRACT.values())):
    if code not in text:
        failures.append(f"code {code} does not appear in the text of the spec")

if failures:
    print(f"openapi: {path} drifted from the error-code contract:", file=sys.stderr)
    for failure in failures:
        print(f"  - {failure}", file=sys.stderr)
    sys.exit(1)

print(f"openapi: {path} OK ({len(spec.get('paths') or {})} paths)")
PY
