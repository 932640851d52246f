"""make header-costs: the gateway's CPU for the worst spelling of each header it parses, against a
junk header of the same size on the same route, in alternated rounds.

Each case sends REQUESTS requests over one kept-alive connection (a new one when the gateway
closes it) and reads the gateway's CPU (every thread's run time, /proc/PID/task/*/schedstat, in
nanoseconds) before and after: µs per request. Rounds alternate the worst spelling and the junk
header so drift of the machine hits both alike. Prints one table: median µs per request over the
rounds, the spread (min-max), and the ratio worst / junk.

Usage: header_costs.py GATEWAY_PID GATEWAY_PORT [--rounds N] [--requests N] [--size BYTES]
"""

import argparse
import base64
import glob
import socket
import statistics
import sys


def cpu_ns(pid):
    total = 0
    for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(path) as handle:
                total += int(handle.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def read_answer(sock, buffer):
    """One answer (its head and its Content-Length or chunked body) from `buffer` and the socket;
    returns (status, closing, rest) or None when the server closed first."""
    while b"\r\n\r\n" not in buffer:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        buffer += chunk
    head, _, rest = buffer.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        fields[name.strip().lower()] = value.strip().lower()
    if fields.get(b"transfer-encoding") == b"chunked":
        while not rest.endswith(b"0\r\n\r\n"):
            chunk = sock.recv(65536)
            if not chunk:
                return None
            rest += chunk
        rest = b""
    else:
        length = int(fields.get(b"content-length", b"0"))
        while len(rest) < length:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            rest += chunk
        rest = rest[length:]
    return status, fields.get(b"connection") == b"close", rest


def run(port, request, count):
    """Sends `request` `count` times; returns the statuses seen."""
    statuses = set()
    sock = None
    for _ in range(count):
        if sock is None:
            sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(request)
        answer = read_answer(sock, b"")
        if answer is None:
            sock.close()
            sock = None
            statuses.add("closed")
            continue
        status, closing, _ = answer
        statuses.add(status)
        if closing:
            sock.close()
            sock = None
    if sock is not None:
        sock.close()
    return statuses


def request(method, target, fields, body=b""):
    head = f"{method} {target} HTTP/1.1\r\nHost: gateway.test\r\n".encode()
    for name, value in fields:
        head += name.encode() + b": " + (value if isinstance(value, bytes) else value.encode()) + b"\r\n"
    if method == "POST":
        head += f"Content-Length: {len(body)}\r\n".encode()
    return head + b"\r\n" + body


def partner_status_at_bound(size):
    """Base64 of a JSON object of many distinct keys, as long as the bound allows."""
    members = []
    index = 0
    while True:
        members.append(f'"k{index}":"{index}"')
        text = '{"frameworkPermissionInfo":{"accessStatus":"granted"},"x":{' + ",".join(members) + "}}"
        if len(base64.b64encode(text.encode())) > size:
            members.pop()
            text = '{"frameworkPermissionInfo":{"accessStatus":"granted"},"x":{' + ",".join(members) + "}}"
            return base64.b64encode(text.encode()).decode()
        index += 1


def cases(size):
    """(name, route method, target, the field of the worst spelling, other fields, body)."""
    v2 = ("GET", "/api/v2/REF/profiles")
    form = [("Content-Type", "application/x-www-form-urlencoded")]
    return [
        ("AP-Partner-Framework-Status: '-' repeated", *v2, ("AP-Partner-Framework-Status", "-" * size), [], b""),
        ("AP-Partner-Framework-Status: 4 KiB of valid JSON keys", *v2, ("AP-Partner-Framework-Status", partner_status_at_bound(4096)), [], b""),
        ("Connection: 'a,' repeated", *v2, ("Connection", "a," * (size // 2)), [], b""),
        ("Connection: 32 long names", *v2, ("Connection", ",".join(["x" * (size // 33)] * 32)), [], b""),
        ("Accept on a v1 refusal: blanks then a type", "POST", "/api/v1/tokens/authn", ("Accept", " " * (size - 20) + "application/xml"), [("Content-Type", "text/plain")], b"a=1"),
        ("Content-Type on the v1 exchange", "POST", "/api/v1/tokens/authn", ("Content-Type", "application/x-www-form-urlencoded" + " " * (size - 40) + ";a=b"), [], b"a=1"),
        ("Authorization on the v2 exchange", "POST", "/api/v2/REF/profiles/sso/apple", ("Authorization", "Bearer " + "a" * (size - 7)), form, b"SAMLResponse=x"),
        ("AP-Device-Identifier on the v2 exchange", "POST", "/api/v2/REF/profiles/sso/apple", ("AP-Device-Identifier", "fingerprint " + "A" * (size - 12)), form + [("Authorization", "Bearer t")], b"SAMLResponse=x"),
        ("X-Forwarded-For from a trusted proxy: '127.0.0.1,' repeated", *v2, ("X-Forwarded-For", "127.0.0.1," * (size // 10)), [], b""),
        ("Expect", *v2, ("Expect", "100-continue" + " " * (size - 20) + "x"), [], b""),
        ("Host", *v2, ("X-Unused", "x"), [], b""),  # replaced below: Host is in every request
        ("tracestate", *v2, ("tracestate", "a=" + "b" * (size - 2)), [("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")], b""),
        ("X-Request-Id", *v2, ("X-Request-Id", "r" * size), [], b""),
        ("a value that is not UTF-8 (0xFF bytes)", *v2, ("X-Bytes", b"\xff" * size), [], b""),
    ]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("pid", type=int)
    parser.add_argument("port", type=int)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--size", type=int, default=40000)
    arguments = parser.parse_args()
    size = arguments.size
    rows = []
    for name, method, target, worst, others, body in cases(size):
        if name == "Host":
            worst_request = request(method, target, others, body).replace(b"Host: gateway.test", b"Host: " + b"h" * size)
        else:
            worst_request = request(method, target, [worst] + others, body)
        value = worst[1]
        junk_size = size if name == "Host" else len(value)
        junk_request = request(method, target, [("X-Junk", "j" * junk_size)] + others, body)
        worst_us, junk_us, statuses = [], [], {}
        for _ in range(arguments.rounds):
            for kind, payload, into in (("worst", worst_request, worst_us), ("junk", junk_request, junk_us)):
                before = cpu_ns(arguments.pid)
                seen = run(arguments.port, payload, arguments.requests)
                into.append((cpu_ns(arguments.pid) - before) / arguments.requests / 1000)
                statuses.setdefault(kind, set()).update(seen)
        rows.append((name, junk_size, worst_us, junk_us, statuses))
        print(f"  {name}: done", file=sys.stderr)
    print(f"\n{arguments.rounds} rounds of {arguments.requests} requests each, alternated; gateway CPU per request (µs), median [min-max]\n")
    print("| header, worst spelling | bytes | worst µs | junk header µs | worst / junk | answers (worst; junk) |")
    print("|---|---:|---:|---:|---:|---|")
    for name, length, worst_us, junk_us, statuses in rows:
        worst_median, junk_median = statistics.median(worst_us), statistics.median(junk_us)
        answers = "; ".join(",".join(str(s) for s in sorted(statuses[k], key=str)) for k in ("worst", "junk"))
        print(
            f"| {name} | {length} | {worst_median:.1f} [{min(worst_us):.1f}-{max(worst_us):.1f}] "
            f"| {junk_median:.1f} [{min(junk_us):.1f}-{max(junk_us):.1f}] | {worst_median / junk_median:.2f} | {answers} |"
        )


if __name__ == "__main__":
    main()
