"""make tracing-check's collector and judge: an OTLP/HTTP receiver that parses every export with
OpenTelemetry's own generated protobuf classes (opentelemetry-proto), then, once the gateway has
stopped, checks the spans of the requests the script sent against what OTLP and the docs say.

    otlp_check.py serve PORT OUT      receive on 127.0.0.1:PORT, one JSON line per span into OUT
    otlp_check.py judge OUT TRACE_ID CLIENT_SPAN STATE SERVICE
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import unknown_fields
from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest, ExportTraceServiceResponse)
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status


def serve(port, out):
    class Receiver(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            request = ExportTraceServiceRequest()
            ok = self.path == "/v1/traces" and self.headers.get("content-type") == "application/x-protobuf"
            try:
                request.ParseFromString(body)
            except Exception as error:  # a malformed export is the failure this check is for
                ok = False
                print(f"tracing-check: an export does not parse: {error}", file=sys.stderr)
            with open(out, "a") as lines:
                for resource_spans in request.resource_spans:
                    resource = {kv.key: kv.value.string_value for kv in resource_spans.resource.attributes}
                    for scope_spans in resource_spans.scope_spans:
                        for span in scope_spans.spans:
                            lines.write(json.dumps({
                                "resource": resource, "scope": scope_spans.scope.name,
                                "trace_id": span.trace_id.hex(), "span_id": span.span_id.hex(),
                                "parent": span.parent_span_id.hex(), "state": span.trace_state, "name": span.name,
                                "kind": Span.SpanKind.Name(span.kind), "start": span.start_time_unix_nano,
                                "end": span.end_time_unix_nano, "status": Status.StatusCode.Name(span.status.code),
                                "attributes": {kv.key: MessageToDict(kv.value) for kv in span.attributes},
                                "unknown": len(unknown_fields.UnknownFieldSet(span)),
                                "ok": ok}) + "\n")
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200 if ok else 400)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args):
            pass

    ThreadingHTTPServer(("127.0.0.1", int(port)), Receiver).serve_forever()


def judge(out, trace_id, client_span, state, service):
    spans = [json.loads(line) for line in open(out)]
    failures = []

    def check(what, condition):
        print(f"  {'ok  ' if condition else 'FAIL'} {what}")
        if not condition:
            failures.append(what)

    check("every export parsed by opentelemetry-proto, on /v1/traces as application/x-protobuf", spans and all(s["ok"] for s in spans))
    check(f"resource service.name is {service}, scope samlgate", all(s["resource"].get("service.name") == service and s["scope"] == "samlgate" for s in spans))
    servers = [s for s in spans if s["kind"] == "SPAN_KIND_SERVER"]
    check("two server spans: GET proxy and POST v1_tokens_authn", sorted(s["name"] for s in servers) == ["GET proxy", "POST v1_tokens_authn"])
    for server in servers:
        name = server["name"]
        children = [s for s in spans if s["parent"] == server["span_id"]]
        check(f"{name}: the client's trace {trace_id} continued under its span {client_span}",
              server["trace_id"] == trace_id and server["parent"] == client_span)
        check(f"{name}: 8-byte span id, trace state {state!r} on it and every stage",
              len(server["span_id"]) == 16 and all(s["state"] == state for s in [server] + children))
        status = "200" if name == "GET proxy" else "204"
        check(f"{name}: http.response.status_code an int_value {status}, status unset",
              server["attributes"].get("http.response.status_code") == {"intValue": status} and server["status"] == "STATUS_CODE_UNSET")
        check(f"{name}: starts before it ends, each stage within it",
              0 < server["start"] <= server["end"] and all(server["start"] <= c["start"] <= c["end"] <= server["end"] for c in children))
        check(f"{name}: its stages internal, same trace, ids distinct",
              all(c["kind"] == "SPAN_KIND_INTERNAL" and c["trace_id"] == trace_id for c in children)
              and len({c["span_id"] for c in children + [server]}) == len(children) + 1)
        expected = ["upstream"] if name == "GET proxy" else ["admission", "upstream", "verification", "worker_wait"]
        check(f"{name}: stages {expected}", sorted(c["name"] for c in children) == expected)
    exchange = next((s for s in servers if s["name"] == "POST v1_tokens_authn"), {"attributes": {}})
    check("the exchange's samlgate.outcome forwarded (a string_value)",
          exchange["attributes"].get("samlgate.outcome") == {"stringValue": "forwarded"})
    check("no field opentelemetry-proto does not know", all(s["unknown"] == 0 for s in spans))
    if failures:
        raise SystemExit(f"tracing-check: {len(failures)} check(s) failed")
    print(f"tracing-check: {len(spans)} spans, all as OTLP says")


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(*sys.argv[2:4])
    else:
        judge(*sys.argv[2:7])
