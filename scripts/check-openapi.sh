#!/usr/bin/env bash
# Validates docs/openapi.yaml (OpenAPI 3.0) with openapi-spec-validator, and checks the gateway's
# refusals in it against the contract below: the backend's published codes the gateway answers,
# by the HTTP status of the answer. Every (status, code) pair is documented on some route (or,
# for the few answered only on v1 routes the spec does not list, in its description), no route
# documents a pair the contract does not have, and each response's body `status` and `action`
# are those the backend documents for its codes. The contract itself must equal the pairs of the
# mapping table in docs/errors.md ("What the client gets"), which scripts/check-docs.sh checks
# against the sources: a change to the mapping shows up in all three or fails here.
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

"$TOOLS_PYTHON" - "$SPEC" docs/errors.md Sources/ServerSupport/Errors/ErrorAction.swift <<'PY'
import re
import sys
import yaml
from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename

path, errors_page, actions_source = sys.argv[1:4]

# The backend's published codes the gateway answers, by the HTTP status of its answer (the
# contract the Swift code implements; see GatewayError+Backend.swift and docs/errors.md).
CONTRACT = {
    400: """invalid_parameter_saml_response invalid_requestor invalid_device_id invalid_device_info
            invalid_parameter_mvpd invalid_parameter_service_provider invalid_parameter_partner
            invalid_header_device_identifier invalid_header_device_info
            invalid_header_pfs_permission_access_not_present invalid_header_pfs_permission_access_not_determined
            invalid_header_pfs_permission_access_not_granted invalid_header_pfs_provider_id_not_determined
            invalid_header_pfs_provider_info_expired unknown_integration internal_error internal_server_error""",
    401: "invalid_access_token_client_application",
    403: "internal_error internal_server_error",
    405: "internal_error internal_server_error",
    408: "internal_error internal_server_error",
    413: "invalid_parameter_saml_response",
    500: "internal_error internal_server_error",
    502: "network_connection_timeout network_received_error",
    503: "maximum_execution_time_exceeded network_connection_timeout internal_error internal_server_error",
    504: "maximum_execution_time_exceeded",
}
CONTRACT = {status: set(codes.split()) for status, codes in CONTRACT.items()}

# Pairs answered only on REST API v1 routes the gateway forwards unchanged, which the spec does
# not list one by one, or on every path of the probe listener (`tls_required`): they must appear
# in info.description instead.
PASS_THROUGH_ONLY = {(408, "internal_error"), (403, "internal_error"), (403, "internal_server_error")}

# The body `status` values the backend documents.
DOCUMENTED_STATUSES = {400, 401, 403, 404, 405, 410, 412, 500}

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


def property_enums(schema, name, seen=()):
    """The values property `name` may take under `schema`, through $ref: its `enum`; under
    `allOf` the values every branch allows (each branch constrains it), under `oneOf`/`anyOf`
    the values some branch allows. An empty set: no enum anywhere."""
    schema = resolve(schema)
    if not isinstance(schema, dict) or id(schema) in seen:
        return set()
    seen = seen + (id(schema),)
    allowed = None
    prop = resolve((schema.get("properties") or {}).get(name, {}))
    if isinstance(prop, dict) and "enum" in prop:
        allowed = {str(value) for value in prop["enum"]}
    for sub in schema.get("allOf", []):
        found = property_enums(sub, name, seen)
        if found:
            allowed = found if allowed is None else allowed & found
    for key in ("oneOf", "anyOf"):
        branches = [property_enums(sub, name, seen) for sub in schema.get(key, [])]
        if any(branches):
            found = set().union(*branches)
            allowed = found if allowed is None else allowed & found
    return allowed or set()


def code_enums(schema):
    """The `code` values a response's schema allows."""
    return property_enums(schema, "code")


def mapping_table(page):
    """{(HTTP, code): (body statuses, actions)} from the table "The mapping" of docs/errors.md."""
    pairs, header = {}, None
    for line in open(page, encoding="utf-8"):
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")] if line.startswith("|") else None
        if cells is None:
            header = None
            continue
        if header is None:
            header = [cell.lower() for cell in cells]
            continue
        if header[:5] != ["reason", "case", "http", "rest api v2", "rest api v1"] or set("".join(cells)) <= set("-: "):
            continue
        http = int(cells[2])
        for index, api in ((3, "v2"), (4, "v1")):
            code = re.findall(r"`([a-z0-9_]+)`", cells[index])
            if not code:
                continue

            def per_api(cell):
                match = re.fullmatch(r"v2 (\S+), v1 (\S+)", cell.replace("`", "").strip())
                return (match.group(1) if api == "v2" else match.group(2)) if match else cell.replace("`", "").strip()

            statuses, actions = pairs.setdefault((http, code[0]), (set(), set()))
            statuses.add(int(per_api(cells[5])))
            actions.add(per_api(cells[6]))
    return pairs


table = mapping_table(errors_page)
if not table:
    failures.append(f"{errors_page}: no mapping table (reason | case | HTTP | REST API v2 | REST API v1 | status | action)")
contract_pairs = {(status, code) for status, codes in CONTRACT.items() for code in codes}
for status, code in sorted(contract_pairs - set(table)):
    failures.append(f"contract {status} {code}: not in the mapping table of {errors_page}")
for status, code in sorted(set(table) - contract_pairs):
    failures.append(f"{errors_page}: the mapping answers {status} {code}, which the contract does not have")

documented = {}  # status -> codes documented on some operation
methods = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
for route, item in (spec.get("paths") or {}).items():
    for method, operation in resolve(item).items():
        if method not in methods:
            continue
        for status, response in (operation.get("responses") or {}).items():
            response = resolve(response)
            per_media = {name: code_enums(media.get("schema", {})) for name, media in (response.get("content") or {}).items()}
            if len({frozenset(codes) for codes in per_media.values()}) > 1:
                failures.append(f"{method.upper()} {route} {status}: the media types list different codes ({', '.join(per_media)})")
            for media in (response.get("content") or {}).values():
                schema = media.get("schema", {})
                codes = code_enums(schema)
                if not codes:
                    continue
                where = f"{method.upper()} {route} {status}"
                if not str(status).isdigit():
                    failures.append(f"{method.upper()} {route}: error codes under '{status}' response")
                    continue
                status = int(status)
                documented.setdefault(status, set()).update(codes)
                unknown = codes - CONTRACT.get(status, set())
                if unknown:
                    failures.append(f"{where}: codes not in the contract: " + ", ".join(sorted(unknown)))
                known = [table[(status, code)] for code in codes if (status, code) in table]
                want_status = set().union(*(s for s, _ in known)) if known else set()
                want_action = set().union(*(a for _, a in known)) if known else set()
                have_status = {int(value) for value in property_enums(schema, "status")}
                have_action = property_enums(schema, "action")
                if have_status != want_status:
                    failures.append(f"{where}: body status enum {sorted(have_status)}, the mapping gives {sorted(want_status)}")
                if have_action != want_action:
                    failures.append(f"{where}: action enum {sorted(have_action)}, the mapping gives {sorted(want_action)}")

for status, codes in sorted(CONTRACT.items()):
    missing = {code for code in codes - documented.get(status, set()) if (status, code) not in PASS_THROUGH_ONLY}
    if missing:
        failures.append(f"{status}: contract codes no route documents: " + ", ".join(sorted(missing)))

description = (spec.get("info") or {}).get("description", "")
for status, code in sorted(PASS_THROUGH_ONLY):
    if code not in description or str(status) not in description:
        failures.append(f"{status} {code}: answered on unlisted v1 routes only, so info.description must name it")

for code in sorted(set().union(*CONTRACT.values())):
    if code not in text:
        failures.append(f"code {code} does not appear in the text of the spec")

# The shape itself: documented actions and statuses, every code the contract has.
base = resolve((spec.get("components") or {}).get("schemas", {}).get("EnhancedError", {}))
actions = set()
for name, value in re.findall(r'\bcase\s+(\w+)(?:\s*=\s*"([^"]+)")?', open(actions_source, encoding="utf-8").read()):
    actions.add(value or name)
properties = base.get("properties") or {}
if set((properties.get("action") or {}).get("enum", [])) != actions:
    failures.append(f"EnhancedError.action: the enum must be the documented actions ({', '.join(sorted(actions))})")
if set((properties.get("status") or {}).get("enum", [])) != DOCUMENTED_STATUSES:
    failures.append(f"EnhancedError.status: the enum must be the documented statuses {sorted(DOCUMENTED_STATUSES)}")
if set((properties.get("code") or {}).get("enum", [])) != set().union(*CONTRACT.values()):
    failures.append("EnhancedError.code: the enum must be every code of the contract")
if (properties.get("details") or {}).get("type") != "string" or "details" in base.get("required", []):
    failures.append("EnhancedError.details: an optional string, as the backend documents it")
if "helpUrl" in base.get("required", []):
    failures.append("EnhancedError.helpUrl: optional (help-url: none leaves it out)")

if failures:
    print(f"openapi: {path} drifted from the error-code contract:", file=sys.stderr)
    for failure in failures:
        print(f"  - {failure}", file=sys.stderr)
    sys.exit(1)

print(f"openapi: {path} OK ({len(spec.get('paths') or {})} paths)")
PY
