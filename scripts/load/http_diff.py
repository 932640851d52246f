#!/usr/bin/env python3
"""make http-diff: an external HTTP/1.1 differential check of samlgate against nginx.

Two subcommands (Python 3.11, standard library only), started by scripts/http-diff.sh:

  backend   a byte-logging HTTP/1.1 server on loopback. Each `--listen NAME:PORT` is one
            listening socket (one for nginx's upstream, one for the gateway's, so what reached the
            backend is told apart by proxy). Every message it reads is written to a JSON lines log
            exactly as read from the socket (base64), framed by Content-Length or chunked; each
            complete request is answered `200 ok` on a kept-alive connection. Bytes that never
            make a complete request are logged too: `pending` (nothing more came for a moment),
            `partial` (the connection closed mid-message), `malformed` (no framing the backend
            can read; the connection is then closed).

  run       sends the corpus below over raw sockets (one connection per case) to nginx and the
            gateway at the same time, waits until the backend's log is quiet, attributes the new
            log lines to the case, and compares: the statuses each proxy answered, how many
            requests reached the backend through each, and those requests normalized (request
            target, end-to-end header names and values, de-framed body and trailers; the proxies'
            own headers left out). Prints the differences that matter for security, a summary line,
            and writes every case to OUT/results.jsonl.
"""

from __future__ import annotations

import argparse
import base64
import bisect
import json
import os
import socket
import sys
import threading
import time
from dataclasses import dataclass, field

from http_diff_corpus import PAUSE, Case, corpus
from http_diff_wire import Malformed, backend_main, find_head_end, header_values, parse_chunked, parse_head, parse_request, split_lines

QUIET = 1.5  # s without a byte before an unanswered request counts as a timeout
EXTRA = 0.3  # s to wait for answers beyond the expected ones


def parse_responses(data: bytes, closed: bool, head_first: bool) -> tuple[list[int], bool]:
    """Final statuses of the complete answers in data, and whether data ended inside one."""
    statuses: list[int] = []
    pos = 0
    while pos < len(data):
        if not b"HTTP/".startswith(data[pos : pos + 5]):
            statuses.append(-1)  # not an HTTP/1 answer (HTTP/0.9 style: the body alone)
            return statuses, False
        end = find_head_end(data, pos)
        if end is None:
            return statuses, True
        try:
            first, fields = parse_head(data[pos:end])
        except Malformed:
            return statuses, True
        parts = first.split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
            statuses.append(-1)  # not HTTP
            return statuses, False
        code = int(parts[1])
        if 100 <= code < 200 and code != 101:
            pos = end
            continue
        te = header_values(fields, b"transfer-encoding")
        cl = header_values(fields, b"content-length")
        if (head_first and not statuses) or code in (204, 304) or code == 101:
            pos = end
        elif te:
            try:
                parsed = parse_chunked(data, end)
            except Malformed:
                return statuses + [code], False
            if parsed is None:
                return statuses, True
            pos = parsed[0]
        elif cl and cl[0].strip().isdigit():
            n = int(cl[0])
            if len(data) < end + n:
                return statuses, True
            pos = end + n
        else:
            if not closed:
                return statuses, True
            pos = len(data)
        statuses.append(code)
        if code == 101:
            break
    return statuses, False


def exchange(port: int, case: Case) -> dict:
    """Send the case on one connection; read answers until closed, quiet, or all came."""
    out = {"statuses": [], "end": "", "send_error": None, "received": b""}
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    except OSError as e:
        out["end"] = f"connect failed: {e}"
        return out
    data = b""
    closed = False
    try:
        for i, part in enumerate(case.parts):
            if i:
                time.sleep(PAUSE)
            try:
                sock.sendall(part)
            except OSError as e:
                out["send_error"] = type(e).__name__
                break
        last = time.monotonic()
        done_at = None
        while True:
            now = time.monotonic()
            statuses, inside = parse_responses(data, closed, case.head_first)
            if closed:
                break
            if len(statuses) >= case.expect and not inside:
                done_at = done_at or now
                wait = done_at + EXTRA - now
            else:
                done_at = None
                wait = last + QUIET - now
            if wait <= 0:
                break
            sock.settimeout(wait)
            try:
                chunk = sock.recv(65536)
            except socket.timeout:
                continue
            except OSError as e:
                out["end"] = type(e).__name__
                closed = True
                break
            if not chunk:
                closed = True
                break
            data += chunk
            last = time.monotonic()
    finally:
        sock.close()
    statuses, inside = parse_responses(data, closed, case.head_first)
    out["statuses"] = statuses
    out["received"] = data
    if not out["end"]:
        if closed:
            out["end"] = "closed"
        elif len(statuses) < case.expect or inside:
            out["end"] = "timeout"
        else:
            out["end"] = "open"
    return out


# --------------------------------------------------------------------------------------------
# what reached the backend, normalized
# --------------------------------------------------------------------------------------------

# Headers each proxy writes itself, or that describe a hop: left out of the comparison.
OWN = {b"host", b"connection", b"keep-alive", b"content-length", b"transfer-encoding", b"x-forwarded-for",
       b"x-forwarded-host", b"x-forwarded-proto", b"x-request-id", b"traceparent"}


def text(b: bytes) -> str:
    """Bytes as text for the tables and the JSON: ASCII printable kept, the rest escaped."""
    return "".join(chr(c) if 0x20 <= c < 0x7F and c != 0x5C else "\\\\" if c == 0x5C else f"\\x{c:02x}" for c in b)


@dataclass
class Forwarded:
    kind: str
    raw: bytes
    conn: int
    t0: float
    method: bytes = b""
    target: bytes = b""
    version: bytes = b""
    headers: list = field(default_factory=list)  # all (name, value) as received
    body: bytes = b""
    trailers: list = field(default_factory=list)
    framing: str = ""
    anomalies: list = field(default_factory=list)

    def normalized(self) -> dict:
        hdrs: dict[str, list[str]] = {}
        for n, v in self.headers:
            name = n.strip().lower()
            if name in OWN:
                continue
            hdrs.setdefault(text(name), []).append(text(v))
        return {"line": text(self.method + b" " + self.target), "headers": dict(sorted(hdrs.items())),
                "body": text(self.body), "trailers": [[text(n.lower()), text(v)] for n, v in self.trailers]}


def forwarded_of(record: dict) -> Forwarded:
    raw = base64.b64decode(record["raw"])
    fw = Forwarded(record["kind"], raw, record["conn"], record["t0"])
    try:
        msg = parse_request(raw) if record["kind"] == "request" else None
    except Malformed:
        msg = None
    if msg is None:
        return fw
    parts = msg.first.split(b" ")
    if len(parts) >= 3:
        fw.method, fw.target, fw.version = parts[0], b" ".join(parts[1:-1]), parts[-1]
    else:
        fw.method, fw.target = (parts + [b""])[:2]
    fw.headers, fw.body, fw.trailers, fw.framing = msg.fields, msg.body, msg.trailers, msg.framing
    # framing a backend could read two ways
    cl = header_values(msg.fields, b"content-length")
    te = header_values(msg.fields, b"transfer-encoding")
    if cl and te:
        fw.anomalies.append("Content-Length beside Transfer-Encoding")
    if len(cl) > 1 or any(not v.isdigit() for v in cl):
        fw.anomalies.append(f"Content-Length {[text(v) for v in cl]}")
    if te and [v.lower() for v in te] != [b"chunked"]:
        fw.anomalies.append(f"Transfer-Encoding {[text(v) for v in te]}")
    head = msg.raw[: find_head_end(msg.raw) or 0]
    if b"\r" in head.replace(b"\r\n", b""):
        fw.anomalies.append("bare CR in the head")
    if head.count(b"\n") != head.count(b"\r\n"):
        fw.anomalies.append("bare LF line end in the head")
    for n, v in msg.fields:
        if not n or any(c <= 0x20 or c >= 0x7F or chr(c) in '"(),/:;<=>?@[\\]{}' for c in n):
            fw.anomalies.append(f"header name {text(n)!r} is not a token")
        if any((c < 0x20 and c != 0x09) or c == 0x7F for c in v):
            fw.anomalies.append(f"control byte in {text(n)}")
    return fw


def is_subsequence(small: bytes, big: bytes) -> bool:
    it = iter(big)
    return all(c in it for c in small)


def sent_hosts(sent: bytes) -> set[bytes]:
    """Every Host value and absolute-form authority in what the client sent (lower case)."""
    hosts = set()
    for line in split_lines(sent):
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == b"host":
            hosts.add(value.strip(b" \t").lower())
        parts = line.split(b" ")
        if len(parts) >= 2 and b"://" in parts[1]:
            hosts.add(parts[1].split(b"://", 1)[1].split(b"/", 1)[0].lower())
    return hosts


def rewritten(fw: Forwarded, sent: bytes, backend_port: int) -> list[str]:
    """What samlgate forwarded that the client never sent, and its own headers missing or wrong."""
    notes = []
    low = sent.lower()
    names = {n.strip().lower() for n, _ in fw.headers}
    hosts = sent_hosts(sent)
    for own in (b"x-forwarded-for", b"x-forwarded-proto", b"x-request-id", b"traceparent"):
        if own not in names:
            notes.append(f"its own {own.decode()} is missing")
    if hosts and b"x-forwarded-host" not in names:
        notes.append("its own x-forwarded-host is missing")
    if fw.target and fw.target not in sent:
        notes.append(f"target {text(fw.target)!r} not sent")
    for n, v in fw.headers:
        name = n.strip().lower()
        if name in (b"connection", b"keep-alive", b"content-length", b"transfer-encoding", b"x-request-id", b"traceparent"):
            continue
        if name == b"x-forwarded-for":
            if v != b"127.0.0.1":
                notes.append(f"X-Forwarded-For {text(v)!r} is not the peer")
        elif name == b"x-forwarded-proto":
            if v != b"http":
                notes.append(f"X-Forwarded-Proto {text(v)!r}")
        elif name == b"x-forwarded-host":
            if v.lower() not in hosts:
                notes.append(f"X-Forwarded-Host {text(v)!r} is not the request's host")
        elif name == b"host" and v == b"127.0.0.1:%d" % backend_port:
            pass  # the upstream's authority
        elif name not in low or v not in sent:
            notes.append(f"{text(n)}: {text(v)!r} not sent as such")
    if fw.body and not is_subsequence(fw.body, sent):
        notes.append("body bytes not sent")
    return notes


# --------------------------------------------------------------------------------------------
# the run
# --------------------------------------------------------------------------------------------


def read_log(path: str, offset: int) -> list[dict]:
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read()
    data = data[: data.rfind(b"\n") + 1]
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def settle(path: str, quiet: float = 0.45, limit: float = 4.0) -> None:
    """Until nothing new was written to the log for `quiet` seconds (at most `limit`)."""
    start = changed = time.monotonic()
    size = os.path.getsize(path)
    while time.monotonic() - changed < quiet and time.monotonic() - start < limit:
        time.sleep(0.05)
        now_size = os.path.getsize(path)
        if now_size != size:
            size, changed = now_size, time.monotonic()


def unresolved(records: list[dict]) -> int:
    """Connections whose last record is an incomplete message still waiting for bytes."""
    last = {}
    for r in records:
        last[(r["listener"], r["conn"])] = r["kind"]
    return sum(1 for kind in last.values() if kind == "pending")


def outcome(client: dict) -> str:
    s = client["statuses"]
    shown = "/".join("non-HTTP" if c < 0 else str(c) for c in s) if s else "-"
    end = client["end"]
    return shown + ("" if end == "open" else f" {end}")


def complete(fws: list) -> list:
    return [f for f in fws if f.kind in ("request", "malformed")]


def incomplete(fws: list) -> list:
    """Messages that never completed: partial ones, and pending ones nothing completed later."""
    done = {(f.conn, f.t0) for f in fws if f.kind != "pending"}
    return [f for f in fws if f.kind == "partial" or (f.kind == "pending" and (f.conn, f.t0) not in done)]


def classify(side: dict) -> tuple[str | None, list[str]]:
    n, g = side["nginx"], side["samlgate"]
    nf, gf = complete(n["forwarded"]), complete(g["forwarded"])
    notes: list[str] = []
    dropped: list[str] = []
    cls = None
    if not nf and not gf:
        pass
    elif not gf:
        cls = "samlgate stricter"
        notes.append("samlgate refused, nginx forwarded")
    elif not nf:
        cls = "samlgate laxer"
        notes.append("samlgate forwarded, nginx refused")
    elif len(nf) != len(gf):
        cls = "samlgate stricter" if len(gf) < len(nf) else "samlgate laxer"
        notes.append(f"backend got {len(nf)} via nginx, {len(gf)} via samlgate")
    else:
        for i, (a, b) in enumerate(zip(nf, gf)):
            na, nb = a.normalized(), b.normalized()
            if a.kind != b.kind:
                notes.append(f"#{i + 1}: {a.kind} via nginx, {b.kind} via samlgate")
            for key in ("line", "body", "trailers"):
                if na.get(key) != nb.get(key):
                    notes.append(f"#{i + 1} {key}: nginx {na.get(key)!r} / samlgate {nb.get(key)!r}")
            for name in sorted(set(na.get("headers", {})) | set(nb.get("headers", {}))):
                va, vb = na["headers"].get(name), nb["headers"].get(name)
                if va != vb:
                    notes.append(f"#{i + 1} {name}: nginx {va} / samlgate {vb}")
                    if vb is None:
                        dropped.append(name)
        if notes:
            cls = "content differs"
            if len(dropped) == len(notes):
                notes.insert(0, f"samlgate only dropped what nginx passed on: {', '.join(dropped)}")
    for i, f in enumerate(gf):
        for note in f.anomalies:
            notes.append(f"samlgate #{i + 1} framing/bytes: {note}")
            cls = cls or "content differs"
        for note in g["rewritten"][i]:
            notes.append(f"samlgate #{i + 1} rewrote: {note}")
            cls = cls or "content differs"
    ni, gi = incomplete(n["forwarded"]), incomplete(g["forwarded"])
    if gi:
        notes.append(f"samlgate left {len(gi)} incomplete request(s) upstream ({', '.join(f.kind for f in gi)}; "
                     f"nginx {len(ni)})")
    return cls, notes


def run_main(args) -> int:
    os.makedirs(args.out, exist_ok=True)
    offset = os.path.getsize(args.backend_log)
    ports = {"nginx": args.nginx, "samlgate": args.gateway}
    cases = corpus()
    if args.only:
        cases = [c for c in cases if any(c.id.startswith(p) for p in args.only.split(","))]
    t0 = time.monotonic()
    starts: list[float] = []
    clients: list[dict] = []
    for case in cases:
        got: dict[str, dict] = {}

        def one(name: str) -> None:
            got[name] = exchange(ports[name], case)

        starts.append(time.time())
        threads = [threading.Thread(target=one, args=(name,)) for name in ports]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        clients.append(got)
        if args.verbose:
            print(f"{case.id:28} nginx {outcome(got['nginx']):20} samlgate {outcome(got['samlgate'])}", file=sys.stderr)
        settle(args.backend_log)  # so the next case starts after this one's backend traffic
    # A proxy may still hold an incomplete request upstream (waiting for a body that never
    # comes): wait until each is completed or dropped, a while at most.
    deadline = time.monotonic() + args.final_wait
    records = read_log(args.backend_log, offset)
    while unresolved(records) and time.monotonic() < deadline:
        time.sleep(0.5)
        records = read_log(args.backend_log, offset)
    # Each message belongs to the case during which its first byte reached the backend.
    per_case: list[list[dict]] = [[] for _ in cases]
    for r in records:
        k = bisect.bisect_right(starts, r["t0"]) - 1
        if k >= 0:
            per_case[k].append(r)

    counts = {"samlgate stricter": 0, "samlgate laxer": 0, "content differs": 0}
    rows = []
    with open(os.path.join(args.out, "results.jsonl"), "w", encoding="ascii") as out:
        for case, got, recs in zip(cases, clients, per_case):
            side = {name: {"client": got[name], "forwarded": [forwarded_of(r) for r in recs if r["listener"] == name]}
                    for name in ports}
            g = side["samlgate"]
            g["rewritten"] = [rewritten(f, case.data, args.gateway_backend) for f in complete(g["forwarded"])]
            cls, notes = classify(side)
            if cls:
                counts[cls] += 1
                rows.append((case, cls, outcome(side["nginx"]["client"]), outcome(g["client"]),
                             len(complete(side["nginx"]["forwarded"])), len(complete(g["forwarded"])), notes))
            record = {"id": case.id, "group": case.group, "what": case.what, "class": cls, "notes": notes,
                      "sent": text(case.data[:4000]), "sent_bytes": len(case.data)}
            for name in ports:
                c = side[name]["client"]
                record[name] = {
                    "statuses": c["statuses"], "end": c["end"], "send_error": c["send_error"],
                    "answer": text(c["received"][:600]),
                    "backend": [{"kind": f.kind, "conn": f.conn, "framing": f.framing, "anomalies": f.anomalies,
                                 **(f.normalized() if f.method else {}), "raw": text(f.raw[:3000]),
                                 "raw_bytes": len(f.raw)} for f in side[name]["forwarded"]],
                }
            out.write(json.dumps(record) + "\n")
    print_table(rows)
    left = unresolved(records)
    print(f"\nwrote {os.path.join(args.out, 'results.jsonl')} ({time.monotonic() - t0:.0f} s"
          + (f"; {left} upstream connection(s) still held an incomplete request at the end)" if left else ")"))
    print(f"{len(cases)} cases, {counts['samlgate stricter']} samlgate stricter, {counts['samlgate laxer']} samlgate laxer, "
          f"{counts['content differs']} content differs")
    return 0


def print_table(rows) -> None:
    order = {"samlgate laxer": 0, "content differs": 1, "samlgate stricter": 2}
    rows = sorted(rows, key=lambda r: order[r[1]])
    print("DIFFERENCES (answer: statuses and how the connection ended; fwd: complete requests the backend got)")
    print(f"{'class':18} {'case':26} {'nginx':>16} {'fwd':>3}  {'samlgate':>16} {'fwd':>3}  what")
    current = None
    for case, cls, n_out, g_out, nfwd, gfwd, notes in rows:
        if cls != current:
            print()
            current = cls
        print(f"{cls:18} {case.id:26} {n_out:>16} {nfwd:>3}  {g_out:>16} {gfwd:>3}  {case.what}")
        shown = notes if cls != "samlgate stricter" else notes[1:]  # the first says what the class says
        for note in shown[:6]:
            print(f"{'':46}- {note[:200]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("backend")
    b.add_argument("--listen", action="append", required=True, help="NAME:PORT (repeatable)")
    b.add_argument("--log", required=True)
    r = sub.add_parser("run")
    r.add_argument("--nginx", type=int, required=True, help="nginx's port")
    r.add_argument("--gateway", type=int, required=True, help="samlgate's port")
    r.add_argument("--gateway-backend", type=int, required=True, help="the backend port behind samlgate")
    r.add_argument("--backend-log", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--only", help="comma-separated case id prefixes")
    r.add_argument("--verbose", action="store_true")
    r.add_argument("--final-wait", type=float, default=20.0,
                   help="s to wait at the end for incomplete upstream requests to complete or drop")
    args = ap.parse_args()
    if args.cmd == "backend":
        backend_main(args)
        return 0
    return run_main(args)


if __name__ == "__main__":
    sys.exit(main())
