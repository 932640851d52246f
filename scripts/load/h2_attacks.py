"""What each known HTTP/2 attack costs the gateway before it closes the connection: CPU time
(the process's utime + stime from /proc, before and after) and resident memory, per attacking
connection, over ROUNDS connections one after another, against a gateway with h2c on loopback.
A well-formed request on a connection of its own is measured the same way, as the yardstick.

    python3 h2_attacks.py PORT PID [ROUNDS]

Prints a Markdown table. The frames are written by hand (h2c with prior knowledge), as
Tests/GatewayTests/RawHTTP2Connection.swift writes them."""

import os
import socket
import struct
import sys
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, CONTINUATION = 0, 1, 3, 4, 6, 7, 9
END_STREAM, END_HEADERS = 0x1, 0x4
TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream & 0x7FFFFFFF) + payload


def integer(value, prefix=7):
    limit = (1 << prefix) - 1
    if value < limit:
        return bytes([value])
    out, value = [limit], value - limit
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    return bytes(out + [value])


def literal(name, value):
    name, value = name.encode(), value.encode()
    return b"\x00" + integer(len(name)) + name + integer(len(value)) + value


def request(method, path, extra=()):
    fields = [(":method", method), (":scheme", "http"), (":path", path), (":authority", "127.0.0.1"), *extra]
    return b"".join(literal(n, v) for n, v in fields)


GET = request("GET", "/api/v1/config/REF")
POST = request("POST", "/api/v1/tokens/authn", [("content-type", "application/x-www-form-urlencoded")])


def rapid_reset():
    out = b""
    for i in range(1000):
        out += frame(HEADERS, END_HEADERS | END_STREAM, 2 * i + 1, GET) + frame(RST_STREAM, 0, 2 * i + 1, struct.pack(">I", 8))
    return out


def continuation_flood():
    return frame(HEADERS, 0, 1, GET) + b"".join(frame(CONTINUATION, 0, 1, literal("x-padding", "a")) for _ in range(1000))


def ping_flood():
    return frame(PING, 0, 0, b"\x07" * 8) * 1000


def settings_flood():
    return frame(SETTINGS, 0, 0) * 1000


def stream_limit():
    return b"".join(frame(HEADERS, END_HEADERS, 2 * i + 1, POST) for i in range(101))


def header_block(size):
    """A GET whose header block is `size` bytes and more, split into 16,000-byte frames."""
    block = request("GET", "/api/v1/config/REF", [(f"x-large-{i}", "a" * 8000) for i in range(size // 8000 + 1)])
    pieces = [block[i:i + 16000] for i in range(0, len(block), 16000)]
    frames = [frame(HEADERS if i == 0 else CONTINUATION, END_HEADERS if i == len(pieces) - 1 else 0, 1, piece)
              for i, piece in enumerate(pieces)]
    return b"".join(frames)


def large_header_list():
    return header_block(90_000)


def oversized_header_block():
    return header_block(300_000)


def malformed_flood():
    bad = request("GET", "/api/v1/config/REF", [("connection", "close")])
    return b"".join(frame(HEADERS, END_HEADERS | END_STREAM, 2 * i + 1, bad) for i in range(1000))


def one_request():
    return frame(HEADERS, END_HEADERS | END_STREAM, 1, GET)


ATTACKS = [
    ("one GET, answered (the yardstick)", one_request, True),
    ("rapid reset: 1,000 streams opened and reset", rapid_reset, False),
    ("CONTINUATION flood: 1,000 frames of one header block", continuation_flood, False),
    ("header list of 90 KB (over HTTP/1.1's 80 KiB): 431 on its stream", large_header_list, True),
    ("header block of 300 KB (over the 256 KiB advertised)", oversized_header_block, False),
    ("PING flood: 1,000", ping_flood, False),
    ("SETTINGS flood: 1,000", settings_flood, False),
    ("101 streams open at once (limit 100): GOAWAY, the streams taken answered", stream_limit, False),
    ("malformed requests: 1,000 streams, each reset alone", malformed_flood, False),
]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_bytes(pid):
    with open(f"/proc/{pid}/statm") as statm:
        return int(statm.read().split()[1]) * PAGE


def attack(port, payload, answered):
    """Sends the preface, the acknowledgement of the server's SETTINGS (its limits apply from
    there) and payload; reads until the server's first GOAWAY or its close (or, for a request,
    until its answer ends). Returns (GOAWAY error code or None, frames received)."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(15)
    try:
        sock.sendall(PREFACE + frame(SETTINGS, 0, 0) + frame(SETTINGS, 0x1, 0))
        try:
            sock.sendall(payload)
        except OSError:
            pass
        buffer, received, code = b"", 0, None
        while True:
            try:
                chunk = sock.recv(65536)
            except OSError:
                break
            if not chunk:
                break
            buffer += chunk
            while len(buffer) >= 9:
                length = int.from_bytes(buffer[:3], "big")
                if len(buffer) < 9 + length:
                    break
                kind, flags, stream = buffer[3], buffer[4], int.from_bytes(buffer[5:9], "big") & 0x7FFFFFFF
                body = buffer[9:9 + length]
                buffer = buffer[9 + length:]
                received += 1
                if kind == GOAWAY and code is None:  # the first: what stopped the attack
                    code = int.from_bytes(body[4:8], "big")
                    if not answered:
                        return code, received
                if answered and stream == 1 and flags & END_STREAM:
                    return code, received
        return code, received
    finally:
        sock.close()


def main():
    port, pid = int(sys.argv[1]), int(sys.argv[2])
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    names = {None: "-", 0: "NO_ERROR", 1: "PROTOCOL_ERROR", 9: "COMPRESSION_ERROR", 11: "ENHANCE_YOUR_CALM"}
    print(f"| attack ({rounds} connections each) | gateway CPU per connection | wall per connection | GOAWAY | RSS after, MiB |")
    print("|---|---:|---:|---|---:|")
    for name, build, answered in ATTACKS:
        payload = build()
        attack(port, payload, answered)  # warm-up
        cpu0, wall0 = cpu_seconds(pid), time.monotonic()
        codes = set()
        for _ in range(rounds):
            code, _ = attack(port, payload, answered)
            codes.add(names.get(code, str(code)))
        cpu = (cpu_seconds(pid) - cpu0) / rounds
        wall = (time.monotonic() - wall0) / rounds
        print(f"| {name} | {cpu * 1000:.2f} ms | {wall * 1000:.1f} ms | {', '.join(sorted(codes))} | {rss_bytes(pid) / 2**20:.0f} |")


if __name__ == "__main__":
    main()
