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

# --------------------------------------------------------------------------------------------
# HTTP/1.1 message framing (shared by the backend and the client's reading of answers)
# --------------------------------------------------------------------------------------------


class Malformed(Exception):
    pass


def find_head_end(buf: bytes, start: int = 0) -> int | None:
    """Index just past the empty line ending a head (CRLF CRLF, or a bare LF line), or None."""
    i = start
    while True:
        j = buf.find(b"\n", i)
        if j < 0:
            return None
        # the line starting at j+1 is empty if it is "\n" or "\r\n"
        if buf[j + 1 : j + 2] == b"\n":
            return j + 2
        if buf[j + 1 : j + 3] == b"\r\n":
            return j + 3
        i = j + 1


def split_lines(head: bytes) -> list[bytes]:
    lines = head.split(b"\n")
    return [line[:-1] if line.endswith(b"\r") else line for line in lines]


def parse_head(head: bytes) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """First line and (name, value) pairs, values without surrounding blanks. Lines that start
    with a blank are joined to the previous value (obs-fold), lines without a colon kept with
    an empty name so they stay visible."""
    lines = split_lines(head)
    while lines and lines[-1] == b"":
        lines.pop()
    # a client may send empty lines before the request line (RFC 9112 §2.2)
    while lines and lines[0] == b"":
        lines.pop(0)
    if not lines:
        raise Malformed("empty head")
    first, fields = lines[0], []
    for line in lines[1:]:
        if line[:1] in (b" ", b"\t") and fields:
            name, value = fields[-1]
            fields[-1] = (name, value + b" " + line.strip(b" \t"))
            continue
        name, sep, value = line.partition(b":")
        if not sep:
            fields.append((b"", line))
        else:
            fields.append((name, value.strip(b" \t")))
    return first, fields


def header_values(fields, name: bytes) -> list[bytes]:
    return [v for n, v in fields if n.strip().lower() == name]


def parse_chunked(buf: bytes, pos: int) -> tuple[int, bytes, list[tuple[bytes, bytes]]] | None:
    """(end, body, trailers) of a chunked body starting at pos; None while incomplete."""
    body = bytearray()
    while True:
        eol = buf.find(b"\n", pos)
        if eol < 0:
            if len(buf) - pos > 4096:
                raise Malformed("chunk-size line too long")
            return None
        line = buf[pos:eol].rstrip(b"\r")
        size_text = line.split(b";", 1)[0].strip(b" \t")
        if not size_text or any(c not in b"0123456789abcdefABCDEF" for c in size_text):
            raise Malformed(f"chunk size {size_text!r}")
        size = int(size_text, 16)
        pos = eol + 1
        if size == 0:
            end = find_head_end(b"\n" + buf[pos:])
            if end is None:
                return None
            trailer_bytes = buf[pos : pos + end - 1]
            trailers = []
            for tline in split_lines(trailer_bytes):
                if tline:
                    n, _, v = tline.partition(b":")
                    trailers.append((n, v.strip(b" \t")))
            return pos + end - 1, bytes(body), trailers
        if len(buf) < pos + size + 1:
            return None
        body += buf[pos : pos + size]
        pos += size
        if buf[pos : pos + 2] == b"\r\n":
            pos += 2
        elif buf[pos : pos + 1] == b"\n":
            pos += 1
        elif len(buf) < pos + 2:
            return None
        else:
            raise Malformed("no line end after chunk data")


@dataclass
class Message:
    raw: bytes
    first: bytes
    fields: list
    body: bytes
    trailers: list
    framing: str


def parse_request(buf: bytes) -> Message | None:
    """One complete request at the start of buf, or None while incomplete."""
    end = find_head_end(buf)
    if end is None:
        if len(buf) > 1 << 20:
            raise Malformed("head over 1 MiB")
        return None
    first, fields = parse_head(buf[:end])
    te = header_values(fields, b"transfer-encoding")
    cl = header_values(fields, b"content-length")
    if te:
        codings = [c.strip(b" \t").lower() for v in te for c in v.split(b",") if c.strip(b" \t")]
        if not codings or codings[-1] != b"chunked":
            raise Malformed(f"transfer-encoding {te!r} without final chunked")
        parsed = parse_chunked(buf, end)
        if parsed is None:
            return None
        stop, body, trailers = parsed
        return Message(buf[:stop], first, fields, body, trailers, "chunked")
    if cl:
        values = {v.strip() for v in cl}
        if len(values) != 1 or not next(iter(values)).isdigit():
            raise Malformed(f"content-length {cl!r}")
        n = int(next(iter(values)))
        if len(buf) < end + n:
            return None
        return Message(buf[: end + n], first, fields, buf[end : end + n], [], f"length {n}")
    return Message(buf[:end], first, fields, b"", [], "none")


# --------------------------------------------------------------------------------------------
# backend
# --------------------------------------------------------------------------------------------

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
ANSWER_HEAD = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n"
PENDING_AFTER = 0.2  # s of silence with an incomplete message before it is logged as pending


class Log:
    def __init__(self, path: str):
        self.f = open(path, "a", encoding="ascii")
        self.lock = threading.Lock()
        self.ids = 0

    def next_id(self) -> int:
        with self.lock:
            self.ids += 1
            return self.ids

    def write(self, record: dict) -> None:
        line = json.dumps(record, separators=(",", ":"))
        with self.lock:
            self.f.write(line + "\n")
            self.f.flush()


def serve_connection(sock: socket.socket, listener: str, log: Log) -> None:
    conn = log.next_id()
    seq = 0
    buf = b""
    first_byte = 0.0  # when the first byte of the message in buf arrived: the run attributes by it
    pending_logged = False

    def record(kind: str, raw: bytes, **extra) -> None:
        nonlocal seq
        seq += 1
        log.write({"listener": listener, "conn": conn, "seq": seq, "t0": round(first_byte, 4),
                   "t": round(time.time(), 4), "kind": kind, "raw": base64.b64encode(raw).decode(), **extra})

    sock.settimeout(PENDING_AFTER)
    try:
        while True:
            try:
                msg = parse_request(buf) if buf else None
            except Malformed as e:
                record("malformed", buf, error=str(e))
                return
            if msg is not None:
                record("request", msg.raw)
                buf = buf[len(msg.raw) :]
                pending_logged = False
                first_byte = time.time()  # the rest came with the bytes just read
                method = msg.first.split(b" ", 1)[0]
                sock.sendall(ANSWER_HEAD if method == b"HEAD" else ANSWER)
                if any(b"close" in v.lower() for v in header_values(msg.fields, b"connection")):
                    return
                continue
            try:
                data = sock.recv(65536)
            except socket.timeout:
                if buf and not pending_logged:
                    record("pending", buf)
                    pending_logged = True
                continue
            if not data:
                if buf:
                    record("partial", buf)
                return
            if not buf:
                first_byte = time.time()
            buf += data
    except OSError as e:
        if buf:
            record("partial", buf, error=str(e))
    finally:
        sock.close()


def accept_loop(server: socket.socket, listener: str, log: Log) -> None:
    while True:
        sock, _ = server.accept()
        threading.Thread(target=serve_connection, args=(sock, listener, log), daemon=True).start()


def backend_main(args) -> None:
    log = Log(args.log)
    threads = []
    for spec in args.listen:
        name, _, port = spec.rpartition(":")
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", int(port)))
        server.listen(128)
        t = threading.Thread(target=accept_loop, args=(server, name, log), daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()


# --------------------------------------------------------------------------------------------
# the corpus
# --------------------------------------------------------------------------------------------

P = b"/api/v2/REF/configuration"
HOST = b"Host: example.com"


def m(*lines: bytes, body: bytes = b"", eol: bytes = b"\r\n") -> bytes:
    """A request from its lines (request line first), the empty line, then body."""
    return eol.join(lines) + eol + eol + body


def get(*headers: bytes, target: bytes = P, line: bytes | None = None, body: bytes = b"") -> bytes:
    return m(line or b"GET " + target + b" HTTP/1.1", HOST, *headers, body=body)


def post(*headers: bytes, body: bytes = b"hello", target: bytes = P) -> bytes:
    return m(b"POST " + target + b" HTTP/1.1", HOST, *headers, body=body)


def post_cl(*headers: bytes, body: bytes = b"hello") -> bytes:
    return post(b"Content-Length: %d" % len(body), *headers, body=body)


def post_te(te: bytes, chunks: bytes = b"5\r\nhello\r\n0\r\n\r\n", *headers: bytes) -> bytes:
    return post(b"Transfer-Encoding: " + te, *headers, body=chunks)


def chunked(chunks: bytes, *headers: bytes) -> bytes:
    return post(b"Transfer-Encoding: chunked", *headers, body=chunks)


SMUGGLED = b"GET /api/v2/REF/smuggled HTTP/1.1\r\nHost: example.com\r\n\r\n"
FOLLOW = b"GET /api/v2/REF/follow-up HTTP/1.1\r\nHost: example.com\r\n\r\n"
WS = (b"Connection: Upgrade", b"Upgrade: websocket", b"Sec-WebSocket-Version: 13",
      b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==")
H2C = (b"Connection: Upgrade, HTTP2-Settings", b"Upgrade: h2c", b"HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA")


@dataclass
class Case:
    id: str
    group: str
    what: str
    parts: list  # bytes sent in turn, PAUSE between them
    expect: int = 1  # requests the client means to send (answers to wait for)
    head_first: bool = False  # the first request is a HEAD (its answer has no body)

    @property
    def data(self) -> bytes:
        return b"".join(self.parts)


PAUSE = 0.3


def corpus() -> list[Case]:
    cases: list[Case] = []

    def add(cid: str, group: str, what: str, data, expect: int = 1, head_first: bool = False):
        parts = data if isinstance(data, list) else [data]
        cases.append(Case(cid, group, what, parts, expect, head_first))

    # --- controls: what both must forward unchanged
    add("ctl-get", "control", "plain GET", get(b"Accept: */*"))
    add("ctl-post-cl", "control", "POST with Content-Length", post_cl(b"Content-Type: text/plain"))
    add("ctl-post-chunked", "control", "POST chunked", chunked(b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"))
    add("ctl-head", "control", "HEAD", get(line=b"HEAD " + P + b" HTTP/1.1"), head_first=True)
    add("ctl-query", "control", "GET with a query", get(target=P + b"?a=1&b=%20x"))

    # --- request line
    g = "request-line"
    add("rl-absolute", g, "absolute-form, Host equal", get(line=b"GET http://example.com" + P + b" HTTP/1.1"))
    add("rl-absolute-other-host", g, "absolute-form, Host differs",
        m(b"GET http://other.example" + P + b" HTTP/1.1", HOST))
    add("rl-absolute-no-host", g, "absolute-form without Host header",
        m(b"GET http://example.com" + P + b" HTTP/1.1", b"Accept: */*"))
    add("rl-absolute-https", g, "absolute-form https scheme", get(line=b"GET https://example.com" + P + b" HTTP/1.1"))
    add("rl-absolute-userinfo", g, "absolute-form with userinfo",
        get(line=b"GET http://user:pw@example.com" + P + b" HTTP/1.1"))
    add("rl-absolute-port", g, "absolute-form with port", get(line=b"GET http://example.com:8080" + P + b" HTTP/1.1"))
    add("rl-absolute-upper-scheme", g, "absolute-form HTTP:// upper case",
        get(line=b"GET HTTP://example.com" + P + b" HTTP/1.1"))
    add("rl-absolute-ftp", g, "absolute-form ftp scheme", get(line=b"GET ftp://example.com" + P + b" HTTP/1.1"))
    add("rl-absolute-no-path", g, "absolute-form without path", get(line=b"GET http://example.com HTTP/1.1"))
    add("rl-absolute-bad-authority", g, "absolute-form, authority with space-less junk",
        get(line=b"GET http://exa%6dple.com" + P + b" HTTP/1.1"))
    add("rl-v12", g, "version HTTP/1.2", get(line=b"GET " + P + b" HTTP/1.2"))
    add("rl-v20", g, "version HTTP/2.0 on HTTP/1 framing", get(line=b"GET " + P + b" HTTP/2.0"))
    add("rl-v30", g, "version HTTP/3.0", get(line=b"GET " + P + b" HTTP/3.0"))
    add("rl-v09", g, "no version (HTTP/0.9 form)", b"GET " + P + b"\r\n")
    add("rl-v-lower", g, "version http/1.1 lower case", get(line=b"GET " + P + b" http/1.1"))
    add("rl-v-leading-zero", g, "version HTTP/01.1", get(line=b"GET " + P + b" HTTP/01.1"))
    add("rl-v-two-digits", g, "version HTTP/1.10", get(line=b"GET " + P + b" HTTP/1.10"))
    add("rl-v-junk", g, "version HTTP/1.1x", get(line=b"GET " + P + b" HTTP/1.1x"))
    add("rl-method-lower", g, "method get in lower case", get(line=b"get " + P + b" HTTP/1.1"))
    add("rl-method-mixed", g, "method Get in mixed case", get(line=b"Get " + P + b" HTTP/1.1"))
    add("rl-method-unknown", g, "unknown method FOO", get(line=b"FOO " + P + b" HTTP/1.1"))
    add("rl-method-odd-token", g, "method with tchar: G-T", get(line=b"G-T " + P + b" HTTP/1.1"))
    add("rl-method-nontoken", g, "method with non-token char: GE(T", get(line=b"GE(T " + P + b" HTTP/1.1"))
    add("rl-tab-sep", g, "tab between method and target", get(line=b"GET\t" + P + b" HTTP/1.1"))
    add("rl-tab-sep2", g, "tab between target and version", get(line=b"GET " + P + b"\tHTTP/1.1"))
    add("rl-two-spaces", g, "two spaces after method", get(line=b"GET  " + P + b" HTTP/1.1"))
    add("rl-two-spaces2", g, "two spaces before version", get(line=b"GET " + P + b"  HTTP/1.1"))
    add("rl-trailing-space", g, "space after version", get(line=b"GET " + P + b" HTTP/1.1 "))
    add("rl-leading-space", g, "space before method", get(line=b" GET " + P + b" HTTP/1.1"))
    add("rl-leading-crlf", g, "empty line before request line", b"\r\n" + get())
    add("rl-leading-2crlf", g, "two empty lines before request line", b"\r\n\r\n" + get())
    add("rl-space-in-target", g, "space inside target", get(line=b"GET " + P + b"/a b HTTP/1.1"))
    add("rl-target-nonascii", g, "raw byte 0xE9 in query", get(target=P + b"?q=caf\xe9"))
    add("rl-target-nonascii-path", g, "raw byte 0xE9 in path", get(target=P + b"/caf\xe9"))
    add("rl-target-nul-escape", g, "%00 in query", get(target=P + b"?q=%00"))
    add("rl-target-nul-raw", g, "raw NUL in target", get(target=P + b"?q=\x00"))
    add("rl-target-ctl-raw", g, "raw 0x01 in target", get(target=P + b"?q=\x01"))
    add("rl-target-del-raw", g, "raw DEL in target", get(target=P + b"?q=\x7f"))
    add("rl-target-fragment", g, "#fragment in target", get(target=P + b"#frag"))
    add("rl-target-star", g, "GET *", get(line=b"GET * HTTP/1.1"))
    add("rl-options-star", g, "OPTIONS *", get(line=b"OPTIONS * HTTP/1.1"))
    add("rl-connect", g, "CONNECT authority-form", get(line=b"CONNECT example.com:443 HTTP/1.1"))
    add("rl-trace", g, "TRACE", get(line=b"TRACE " + P + b" HTTP/1.1"))
    add("rl-no-slash", g, "origin-form without leading /", get(line=b"GET api/v2/REF/configuration HTTP/1.1"))
    add("rl-dot-segments", g, "dot segments /../", get(target=b"/api/v2/REF/x/../configuration"))
    add("rl-dot-above-root", g, "dot segments above the root", get(target=b"/../../api/v2/REF/configuration"))
    add("rl-escaped-slash", g, "escaped slash %2F", get(target=b"/api/v2/REF%2Fconfiguration"))
    add("rl-escaped-unreserved", g, "escaped unreserved %61", get(target=b"/%61pi/v2/REF/configuration"))
    add("rl-escaped-lower-hex", g, "lower-case hex escape %2e", get(target=P + b"/a%2eb"))
    add("rl-bad-escape", g, "malformed escape %zz", get(target=P + b"/%zz"))
    add("rl-backslash", g, "backslash in path", get(target=b"/api/v2/REF\\configuration"))
    add("rl-semicolon", g, "path parameter ;x", get(target=P + b";jsessionid=1"))
    add("rl-double-slash", g, "empty segment //", get(target=b"/api/v2//REF/configuration"))
    add("rl-long-target", g, "10 KB query", get(target=P + b"?q=" + b"a" * 10000))
    add("rl-bare-lf", g, "bare LF line ends throughout", m(b"GET " + P + b" HTTP/1.1", HOST, b"X-A: 1", eol=b"\n"))
    add("rl-bare-cr", g, "bare CR line ends throughout", m(b"GET " + P + b" HTTP/1.1", HOST, b"X-A: 1", eol=b"\r"))
    add("rl-cr-in-line", g, "bare CR inside request line", get(line=b"GET " + P + b"\rX HTTP/1.1"))

    # --- Host
    g = "host"
    line11 = b"GET " + P + b" HTTP/1.1"
    add("host-missing", g, "HTTP/1.1 without Host", m(line11, b"Accept: */*"))
    add("host-two-same", g, "two equal Host headers", m(line11, HOST, HOST))
    add("host-two-diff", g, "two different Host headers", m(line11, HOST, b"Host: evil.example"))
    add("host-path", g, "Host with a path", m(line11, b"Host: example.com/evil"))
    add("host-space", g, "Host with an inner space", m(line11, b"Host: exa mple.com"))
    add("host-comma", g, "Host list with comma", m(line11, b"Host: example.com, evil.example"))
    add("host-userinfo", g, "Host with userinfo", m(line11, b"Host: user@example.com"))
    add("host-port-big", g, "Host port 99999", m(line11, b"Host: example.com:99999"))
    add("host-port-alpha", g, "Host port abc", m(line11, b"Host: example.com:abc"))
    add("host-port-empty", g, "Host with empty port", m(line11, b"Host: example.com:"))
    add("host-port-sign", g, "Host port -1", m(line11, b"Host: example.com:-1"))
    add("host-two-colons", g, "Host example.com:80:80", m(line11, b"Host: example.com:80:80"))
    add("host-ipv6", g, "Host [::1]:8080", m(line11, b"Host: [::1]:8080"))
    add("host-ipv6-bare", g, "Host ::1 without brackets", m(line11, b"Host: ::1"))
    add("host-ipv6-open", g, "Host [::1 unclosed", m(line11, b"Host: [::1"))
    add("host-ipv6-junk", g, "Host [zz::1]", m(line11, b"Host: [zz::1]"))
    add("host-empty", g, "Host empty", m(line11, b"Host:"))
    add("host-blank", g, "Host only blanks", m(line11, b"Host:    "))
    add("host-http10-none", g, "HTTP/1.0 without Host", m(b"GET " + P + b" HTTP/1.0", b"Accept: */*"))
    add("host-http10", g, "HTTP/1.0 with Host", m(b"GET " + P + b" HTTP/1.0", HOST))
    add("host-trailing-dot", g, "Host with trailing dot", m(line11, b"Host: example.com."))
    add("host-upper", g, "Host in upper case", m(line11, b"Host: EXAMPLE.COM"))
    add("host-underscore", g, "Host with underscore", m(line11, b"Host: ex_ample.com"))
    add("host-tab-inside", g, "Host with an inner tab", m(line11, b"Host: exa\tmple.com"))
    add("host-obs-text", g, "Host with byte 0xE9", m(line11, b"Host: caf\xe9.example"))
    add("host-utf8", g, "Host with UTF-8", m(line11, "Host: café.example".encode()))
    add("host-space-colon", g, "Host name with space before colon", m(line11, b"Host : example.com"))
    add("host-long", g, "Host of 300 bytes", m(line11, b"Host: " + b"a" * 296 + b".com"))
    add("host-ows", g, "Host with surrounding blanks", m(line11, b"Host: \t example.com \t"))
    add("host-escape", g, "Host with percent escape", m(line11, b"Host: ex%61mple.com"))
    add("host-lower-name", g, "host name in lower case", m(line11, b"host: example.com"))
    add("host-fold", g, "Host value folded (obs-fold)", m(line11, b"Host: example.com", b" evil.example"))

    # --- header names and values
    g = "header"
    add("hdr-obs-fold", g, "obs-fold continuation line", get(b"X-A: first", b" second"))
    add("hdr-obs-fold-tab", g, "obs-fold with tab", get(b"X-A: first", b"\tsecond"))
    add("hdr-first-line-space", g, "header line after request line starts with a space",
        m(line11, b" X-A: b", HOST))
    add("hdr-bare-cr-value", g, "bare CR inside a value", get(b"X-A: a\rb"))
    add("hdr-bare-lf-line", g, "one header line ending with bare LF", get(b"X-A: a\nX-B: b"))
    add("hdr-nul-value", g, "NUL in a value", get(b"X-A: a\x00b"))
    add("hdr-nul-name", g, "NUL in a name", get(b"X-\x00A: b"))
    add("hdr-del-value", g, "DEL in a value", get(b"X-A: a\x7fb"))
    add("hdr-ctl-value", g, "0x01 in a value", get(b"X-A: a\x01b"))
    add("hdr-vt-value", g, "vertical tab in a value", get(b"X-A: a\x0bb"))
    add("hdr-esc-value", g, "ESC in a value", get(b"X-A: a\x1b[31mb"))
    add("hdr-tab-value", g, "tab inside a value", get(b"X-A: a\tb"))
    add("hdr-obs-text", g, "obs-text byte 0xE9 (not UTF-8)", get(b"X-A: caf\xe9"))
    add("hdr-obs-text-all", g, "every byte 0x80-0xFF in one value", get(b"X-A: " + bytes(range(0x80, 0x100))))
    add("hdr-utf8", g, "UTF-8 value", get("X-A: café ☕".encode()))
    add("hdr-utf8-overlong", g, "overlong UTF-8 (C0 AF)", get(b"X-A: a\xc0\xafb"))
    add("hdr-replacement-char", g, "the character U+FFFD itself", get("X-A: a\ufffdb".encode()))
    add("hdr-name-obs-text", g, "byte 0xE9 in a name", get(b"X-\xe9: b"))
    add("hdr-long-6k", g, "6 KB value", get(b"X-A: " + b"v" * 6000))
    add("hdr-long-9k", g, "9 KB value", get(b"X-A: " + b"v" * 9000))
    add("hdr-long-20k", g, "20 KB value", get(b"X-A: " + b"v" * 20000))
    add("hdr-long-70k", g, "70 KB value", get(b"X-A: " + b"v" * 70000))
    add("hdr-long-100k", g, "100 KB value", get(b"X-A: " + b"v" * 100000))
    add("hdr-long-name", g, "9 KB header name", get(b"X-" + b"n" * 9000 + b": v"))
    add("hdr-underscore", g, "name with underscore X_Custom", get(b"X_Custom: 1"))
    add("hdr-underscore-xff", g, "X_Forwarded_For", get(b"X_Forwarded_For: 6.6.6.6"))
    add("hdr-dot-name", g, "name with dot X.A", get(b"X.A: 1"))
    add("hdr-tilde-name", g, "name with tilde X~A", get(b"X~A: 1"))
    add("hdr-paren-name", g, "name with ( X(A)", get(b"X(A): 1"))
    add("hdr-slash-name", g, "name with / X/A", get(b"X/A: 1"))
    add("hdr-space-colon", g, "space before colon", get(b"X-A : b"))
    add("hdr-tab-colon", g, "tab before colon", get(b"X-A\t: b"))
    add("hdr-space-in-name", g, "space inside a name", get(b"X A: b"))
    add("hdr-empty-name", g, "empty name", get(b": value"))
    add("hdr-no-colon", g, "line without a colon", get(b"JustText"))
    add("hdr-empty-value", g, "empty value", get(b"X-A:"))
    add("hdr-ows", g, "value with surrounding blanks", get(b"X-A: \t  b c \t "))
    add("hdr-colon-value", g, "colon inside a value", get(b"X-A: a:b::c"))
    add("hdr-dup", g, "same header twice (order kept?)", get(b"X-A: 1", b"X-B: x", b"X-A: 2"))
    add("hdr-lower-names", g, "lower-case names", get(b"x-a: 1", b"accept: */*"))
    add("hdr-ct-twice", g, "Content-Type twice on POST", post_cl(b"Content-Type: text/plain", b"Content-Type: application/json"))
    add("hdr-auth-twice", g, "Authorization twice", get(b"Authorization: Bearer a", b"Authorization: Bearer b"))
    add("hdr-cookie-twice", g, "Cookie twice", get(b"Cookie: a=1", b"Cookie: b=2"))
    add("hdr-100", g, "100 headers", get(*[b"X-H%d: v" % i for i in range(100)]))
    add("hdr-1000", g, "1000 headers", get(*[b"X-H%d: v" % i for i in range(1000)]))
    add("hdr-5000", g, "5000 headers (~50 KB)", get(*[b"X-H%d: v" % i for i in range(5000)]))
    add("hdr-10000-tiny", g, "10000 tiny headers (~60 KB)", get(*[b"A: b" for _ in range(10000)]))
    add("hdr-20000-tiny", g, "20000 tiny headers (~120 KB)", get(*[b"A: b" for _ in range(20000)]))
    add("hdr-100000-tiny", g, "100000 tiny headers (~600 KB)", get(*[b"A: b" for _ in range(100000)]))
    add("hdr-head-90k", g, "head just over 80 KB in 30 headers", get(*[b"X-H%d: " % i + b"v" * 3000 for i in range(30)]))

    # --- framing
    g = "framing"
    add("fr-cl-te", g, "Content-Length and Transfer-Encoding: chunked",
        post(b"Content-Length: 5", b"Transfer-Encoding: chunked", body=b"5\r\nhello\r\n0\r\n\r\n"))
    add("fr-te-cl", g, "Transfer-Encoding: chunked then Content-Length",
        post(b"Transfer-Encoding: chunked", b"Content-Length: 5", body=b"5\r\nhello\r\n0\r\n\r\n"))
    add("fr-cl-te-smuggle", g, "CL.TE: CL covers a chunked body hiding a request",
        post(b"Content-Length: %d" % len(b"0\r\n\r\n" + SMUGGLED), b"Transfer-Encoding: chunked", body=b"0\r\n\r\n" + SMUGGLED))
    add("fr-te-cl-smuggle", g, "TE.CL: chunked body whose CL points inside it",
        post(b"Transfer-Encoding: chunked", b"Content-Length: 4",
             body=b"%x\r\n" % len(SMUGGLED) + SMUGGLED + b"\r\n0\r\n\r\n"))
    add("fr-cl-twice-same", g, "Content-Length twice, equal", post(b"Content-Length: 5", b"Content-Length: 5"))
    add("fr-cl-twice-diff", g, "Content-Length twice, different", post(b"Content-Length: 5", b"Content-Length: 6", body=b"hello!"))
    add("fr-cl-list-same", g, "Content-Length: 5, 5", post(b"Content-Length: 5, 5"))
    add("fr-cl-list-diff", g, "Content-Length: 5, 6", post(b"Content-Length: 5, 6", body=b"hello!"))
    add("fr-cl-plus", g, "Content-Length: +5", post(b"Content-Length: +5"))
    add("fr-cl-minus", g, "Content-Length: -1", post(b"Content-Length: -1"))
    add("fr-cl-ows", g, "Content-Length with blanks around", post(b"Content-Length:   5  "))
    add("fr-cl-leading-ows", g, "Content-Length with blanks before", post(b"Content-Length:   5"))
    add("fr-cl-trailing-ows", g, "Content-Length with a blank after", post(b"Content-Length: 5 "))
    add("fr-cl-inner-space", g, "Content-Length: 5 5", post(b"Content-Length: 5 5"))
    add("fr-cl-zeros", g, "Content-Length: 005", post(b"Content-Length: 005"))
    add("fr-cl-hex", g, "Content-Length: 0x5", post(b"Content-Length: 0x5"))
    add("fr-cl-huge", g, "Content-Length of 20 digits", post(b"Content-Length: 99999999999999999999"))
    add("fr-cl-empty", g, "Content-Length empty", post(b"Content-Length:", body=b""))
    add("fr-cl-space-colon", g, "Content-Length : 5 (space before colon)", post(b"Content-Length : 5"))
    add("fr-cl-underscore", g, "Content_Length: 5", post(b"Content_Length: 5"))
    add("fr-cl-fold", g, "Content-Length folded", post(b"Content-Length:", b" 5"))
    add("fr-cl-get-body", g, "GET with Content-Length body", get(b"Content-Length: 5", body=b"hello"))
    add("fr-cl-short", g, "body longer than Content-Length: rest is a 2nd request",
        post(b"Content-Length: 5", body=b"hello" + SMUGGLED), expect=2)
    add("fr-cl-zero-trailing", g, "Content-Length: 0 followed by a request",
        post(b"Content-Length: 0", body=SMUGGLED), expect=2)
    add("fr-no-cl-body", g, "POST without framing, body bytes then a request",
        m(b"POST " + P + b" HTTP/1.1", HOST, body=b"hello" + SMUGGLED), expect=2)
    add("fr-te-chunked-gzip", g, "Transfer-Encoding: chunked, gzip", post_te(b"chunked, gzip"))
    add("fr-te-gzip-chunked", g, "Transfer-Encoding: gzip, chunked", post_te(b"gzip, chunked"))
    add("fr-te-identity", g, "Transfer-Encoding: identity", post_te(b"identity", b"hello"))
    add("fr-te-identity-chunked", g, "Transfer-Encoding: identity, chunked", post_te(b"identity, chunked"))
    add("fr-te-chunked-twice", g, "Transfer-Encoding: chunked, chunked", post_te(b"chunked, chunked"))
    add("fr-te-two-headers", g, "two Transfer-Encoding: chunked headers",
        post(b"Transfer-Encoding: chunked", b"Transfer-Encoding: chunked", body=b"5\r\nhello\r\n0\r\n\r\n"))
    add("fr-te-gzip-then-chunked", g, "Transfer-Encoding: gzip, then a second header chunked",
        post(b"Transfer-Encoding: gzip", b"Transfer-Encoding: chunked", body=b"5\r\nhello\r\n0\r\n\r\n"))
    add("fr-te-xchunked", g, "Transfer-Encoding: xchunked", post_te(b"xchunked"))
    add("fr-te-chunked-x", g, "Transfer-Encoding: chunkedx", post_te(b"chunkedx"))
    add("fr-te-trailing-space", g, "Transfer-Encoding: 'chunked '", post_te(b"chunked "))
    add("fr-te-leading-tab", g, "Transfer-Encoding: '\\tchunked'", post_te(b"\tchunked"))
    add("fr-te-trailing-tab", g, "Transfer-Encoding: 'chunked\\t'", post_te(b"chunked\t"))
    add("fr-te-capital", g, "Transfer-Encoding: Chunked", post_te(b"Chunked"))
    add("fr-te-upper", g, "Transfer-Encoding: CHUNKED", post_te(b"CHUNKED"))
    add("fr-te-empty-element", g, "Transfer-Encoding: , chunked", post_te(b", chunked"))
    add("fr-te-vt", g, "Transfer-Encoding: chunked + vertical tab", post_te(b"chunked\x0b"))
    add("fr-te-quoted", g, 'Transfer-Encoding: "chunked"', post_te(b'"chunked"'))
    add("fr-te-param", g, "Transfer-Encoding: chunked;q=1", post_te(b"chunked;q=1"))
    add("fr-te-fold", g, "Transfer-Encoding folded onto a 2nd line",
        post(b"Transfer-Encoding:", b" chunked", body=b"5\r\nhello\r\n0\r\n\r\n"))
    add("fr-te-space-colon", g, "Transfer-Encoding : chunked (space before colon)",
        post(b"Transfer-Encoding : chunked", body=b"5\r\nhello\r\n0\r\n\r\n"))
    add("fr-te-underscore", g, "Transfer_Encoding: chunked",
        post(b"Transfer_Encoding: chunked", b"Content-Length: 5", body=b"hello"))
    add("fr-te-http10", g, "chunked on HTTP/1.0",
        m(b"POST " + P + b" HTTP/1.0", HOST, b"Transfer-Encoding: chunked", body=b"5\r\nhello\r\n0\r\n\r\n"))
    add("fr-te-get", g, "GET with a chunked body", get(b"Transfer-Encoding: chunked", body=b"5\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-0x", g, "chunk size 0x5", chunked(b"0x5\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-plus", g, "chunk size +5", chunked(b"+5\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-minus", g, "chunk size -5", chunked(b"-5\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-leading-space", g, "chunk size ' 5'", chunked(b" 5\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-trailing-space", g, "chunk size '5 '", chunked(b"5 \r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-trailing-tab", g, "chunk size '5\\t'", chunked(b"5\t\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-upper-hex", g, "chunk size A (upper-case hex)", chunked(b"A\r\nhellohello\r\n0\r\n\r\n"))
    add("fr-ch-zeros", g, "chunk size 0005", chunked(b"0005\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-huge", g, "chunk size of 17 hex digits", chunked(b"ffffffffffffffff1\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-overflow-wrap", g, "chunk size 2^64+5 (wraps to 5)", chunked(b"10000000000000005\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-empty-size", g, "empty chunk-size line", chunked(b"\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-ext", g, "chunk extension ;foo=bar", chunked(b"5;foo=bar\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-ext-quoted", g, 'chunk extension with quoted ";"', chunked(b'5;a="b;c"\r\nhello\r\n0\r\n\r\n'))
    add("fr-ch-ext-bare", g, "chunk extension bare ;", chunked(b"5;\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-ext-space", g, "chunk extension with blanks: 5 ; a = b", chunked(b"5 ; a = b\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-ext-ctl", g, "chunk extension with a control byte", chunked(b"5;a=\x01\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-ext-long", g, "chunk extension of 8 KB", chunked(b"5;a=" + b"x" * 8000 + b"\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-ext-last", g, "extension on the last chunk", chunked(b"5\r\nhello\r\n0;end=1\r\n\r\n"))
    add("fr-ch-data-long", g, "chunk data longer than its size", chunked(b"3\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-data-short", g, "chunk data shorter than its size", chunked(b"7\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-no-crlf", g, "no CRLF after chunk data", chunked(b"5\r\nhello0\r\n\r\n"))
    add("fr-ch-lf-only", g, "bare LF line ends in the chunked body", chunked(b"5\nhello\n0\n\n"))
    add("fr-ch-lf-size", g, "bare LF after a chunk size only", chunked(b"5\nhello\r\n0\r\n\r\n"))
    add("fr-ch-lf-data", g, "bare LF after chunk data only", chunked(b"5\r\nhello\n0\r\n\r\n"))
    add("fr-ch-cr-only", g, "bare CR after chunk data", chunked(b"5\r\nhello\r0\r\n\r\n"))
    add("fr-ch-trailer", g, "trailer field X-T", chunked(b"5\r\nhello\r\n0\r\nX-T: v\r\n\r\n"))
    add("fr-ch-trailer-declared", g, "trailer declared by Trailer: X-T",
        chunked(b"5\r\nhello\r\n0\r\nX-T: v\r\n\r\n", b"Trailer: X-T"))
    add("fr-ch-trailer-cl", g, "Content-Length in the trailer", chunked(b"5\r\nhello\r\n0\r\nContent-Length: 50\r\n\r\n"))
    add("fr-ch-trailer-host", g, "Host in the trailer", chunked(b"5\r\nhello\r\n0\r\nHost: evil.example\r\n\r\n"))
    add("fr-ch-trailer-te", g, "Transfer-Encoding in the trailer",
        chunked(b"5\r\nhello\r\n0\r\nTransfer-Encoding: chunked\r\n\r\n"))
    add("fr-ch-trailer-fold", g, "folded trailer line", chunked(b"5\r\nhello\r\n0\r\nX-T: a\r\n b\r\n\r\n"))
    add("fr-ch-trailer-nocolon", g, "trailer line without colon", chunked(b"5\r\nhello\r\n0\r\nJunk\r\n\r\n"))
    add("fr-ch-trailer-lf", g, "trailer section ended by bare LF", chunked(b"5\r\nhello\r\n0\r\nX-T: v\n\n"))
    add("fr-ch-unterminated", g, "chunked body without last chunk (client stops)", chunked(b"5\r\nhello\r\n"))
    add("fr-ch-then-request", g, "chunked body then a pipelined request",
        chunked(b"5\r\nhello\r\n0\r\n\r\n" + SMUGGLED), expect=2)
    add("fr-ch-zero-then-junk", g, "0-chunk then junk before the empty line", chunked(b"0\r\nGET / HTTP/1.1\r\n\r\n"))
    add("fr-ch-size-smuggle", g, "chunk size hides a request in its extension",
        chunked(b"5;" + SMUGGLED.replace(b"\r\n", b" ") + b"\r\nhello\r\n0\r\n\r\n"))

    # --- Expect
    g = "expect"
    head100 = m(b"POST " + P + b" HTTP/1.1", HOST, b"Content-Length: 5", b"Expect: 100-continue")
    add("exp-100", g, "Expect: 100-continue, body after a pause", [head100, b"hello"])
    add("exp-100-eager", g, "Expect: 100-continue, body sent at once", head100 + b"hello")
    add("exp-100-case", g, "Expect: 100-Continue", [head100.replace(b"100-continue", b"100-Continue"), b"hello"])
    add("exp-100-get", g, "Expect: 100-continue on GET without body", get(b"Expect: 100-continue"))
    add("exp-other", g, "Expect: something-else", post_cl(b"Expect: something-else"))
    add("exp-twice", g, "Expect twice", [m(b"POST " + P + b" HTTP/1.1", HOST, b"Content-Length: 5",
                                         b"Expect: 100-continue", b"Expect: 100-continue"), b"hello"])
    add("exp-http10", g, "Expect: 100-continue on HTTP/1.0",
        [m(b"POST " + P + b" HTTP/1.0", HOST, b"Content-Length: 5", b"Expect: 100-continue"), b"hello"])
    add("exp-chunked", g, "Expect: 100-continue with a chunked body",
        [m(b"POST " + P + b" HTTP/1.1", HOST, b"Transfer-Encoding: chunked", b"Expect: 100-continue"),
         b"5\r\nhello\r\n0\r\n\r\n"])

    # --- Upgrade
    g = "upgrade"
    add("up-websocket", g, "websocket upgrade", get(*WS))
    add("up-websocket-follow", g, "websocket upgrade + pipelined GET", get(*WS) + FOLLOW, expect=2)
    add("up-websocket-frame", g, "websocket upgrade + bytes of a frame", get(*WS) + b"\x81\x85\x00\x00\x00\x00hello")
    add("up-h2c", g, "h2c upgrade", get(*H2C))
    add("up-h2c-follow", g, "h2c upgrade + pipelined GET", get(*H2C) + FOLLOW, expect=2)
    add("up-h2c-preface", g, "h2c upgrade + HTTP/2 preface", get(*H2C) + b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
    add("up-no-connection", g, "Upgrade without Connection: upgrade", get(b"Upgrade: websocket") + FOLLOW, expect=2)
    add("up-connection-only", g, "Connection: Upgrade without Upgrade", get(b"Connection: Upgrade") + FOLLOW, expect=2)
    add("up-post-body", g, "upgrade on POST with a body + pipelined GET",
        post_cl(*WS) + FOLLOW, expect=2)
    add("up-h2-preface", g, "HTTP/2 prior-knowledge preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
    add("up-http2-settings-only", g, "HTTP2-Settings without Upgrade", get(b"HTTP2-Settings: AAMAAABkAAQ"))

    # --- Connection and hop-by-hop headers
    g = "connection"
    add("conn-close-follow", g, "Connection: close + pipelined GET", get(b"Connection: close") + FOLLOW, expect=2)
    add("conn-names-custom", g, "Connection names X-Secret", get(b"Connection: keep-alive, X-Secret", b"X-Secret: s"))
    add("conn-names-auth", g, "Connection names Authorization", get(b"Connection: Authorization", b"Authorization: Bearer t"))
    add("conn-names-cookie", g, "Connection names Cookie", get(b"Connection: Cookie", b"Cookie: a=1"))
    add("conn-names-xff", g, "Connection names X-Forwarded-For", get(b"Connection: X-Forwarded-For", b"X-Forwarded-For: 6.6.6.6"))
    add("conn-names-own", g, "Connection names the headers a proxy sets itself",
        get(b"Connection: X-Forwarded-For, X-Forwarded-Host, X-Forwarded-Proto, X-Request-Id, traceparent"))
    add("conn-names-host", g, "Connection names Host", get(b"Connection: Host"))
    add("conn-names-cl", g, "Connection names Content-Length", post_cl(b"Connection: Content-Length"))
    add("conn-names-te", g, "Connection names Transfer-Encoding",
        chunked(b"5\r\nhello\r\n0\r\n\r\n", b"Connection: Transfer-Encoding"))
    add("conn-names-ct", g, "Connection names Content-Type", post_cl(b"Connection: Content-Type", b"Content-Type: text/plain"))
    add("conn-names-40", g, "Connection lists 40 names", get(b"Connection: " + b", ".join(b"X-C%d" % i for i in range(40))))
    add("conn-names-two-headers", g, "two Connection headers naming X-A and X-B",
        get(b"Connection: X-A", b"Connection: X-B", b"X-A: 1", b"X-B: 2", b"X-C: 3"))
    add("conn-keep-alive-hdr", g, "Keep-Alive header", get(b"Keep-Alive: timeout=5"))
    add("conn-te-trailers", g, "TE: trailers", get(b"TE: trailers"))
    add("conn-te-gzip", g, "TE: gzip", get(b"TE: gzip"))
    add("conn-proxy-auth", g, "Proxy-Authorization", get(b"Proxy-Authorization: Basic dTpw"))
    add("conn-proxy-connection", g, "Proxy-Connection: keep-alive", get(b"Proxy-Connection: keep-alive"))
    add("conn-trailer-hdr", g, "Trailer header on a GET", get(b"Trailer: X-T"))
    add("conn-http10-keepalive", g, "HTTP/1.0 keep-alive + pipelined GET",
        m(b"GET " + P + b" HTTP/1.0", HOST, b"Connection: keep-alive") + FOLLOW, expect=2)
    add("conn-close-token-list", g, "Connection: X-A, close + pipelined GET", get(b"Connection: X-A, close", b"X-A: 1") + FOLLOW, expect=2)

    # --- forwarding claims
    g = "forwarded"
    add("fw-xff", g, "X-Forwarded-For spoof", get(b"X-Forwarded-For: 6.6.6.6"))
    add("fw-xff-twice", g, "X-Forwarded-For twice", get(b"X-Forwarded-For: 6.6.6.6", b"X-Forwarded-For: 7.7.7.7"))
    add("fw-xff-lower", g, "x-forwarded-for lower case", get(b"x-forwarded-for: 6.6.6.6"))
    add("fw-xff-space-colon", g, "X-Forwarded-For with space before colon", get(b"X-Forwarded-For : 6.6.6.6"))
    add("fw-xfh", g, "X-Forwarded-Host spoof", get(b"X-Forwarded-Host: evil.example"))
    add("fw-xfp", g, "X-Forwarded-Proto spoof", get(b"X-Forwarded-Proto: https"))
    add("fw-xf-ssl", g, "X-Forwarded-Ssl spoof", get(b"X-Forwarded-Ssl: on"))
    add("fw-xf-port", g, "X-Forwarded-Port spoof", get(b"X-Forwarded-Port: 443"))
    add("fw-forwarded", g, "Forwarded spoof", get(b"Forwarded: for=6.6.6.6;host=evil.example;proto=https"))
    add("fw-real-ip", g, "X-Real-IP spoof", get(b"X-Real-IP: 6.6.6.6"))
    add("fw-client-ip", g, "Client-IP / True-Client-IP spoof", get(b"Client-IP: 6.6.6.6", b"True-Client-IP: 6.6.6.6"))
    add("fw-original-url", g, "X-Original-URL", get(b"X-Original-URL: /admin"))
    add("fw-rewrite-url", g, "X-Rewrite-URL", get(b"X-Rewrite-URL: /admin"))
    add("fw-method-override", g, "X-HTTP-Method-Override", get(b"X-HTTP-Method-Override: DELETE"))
    add("fw-xhost", g, "X-Host", get(b"X-Host: evil.example"))
    add("fw-request-id", g, "X-Request-Id valid", get(b"X-Request-Id: abc-123"))
    add("fw-request-id-bad", g, "X-Request-Id with quotes", get(b'X-Request-Id: a"b'))
    add("fw-traceparent", g, "traceparent valid",
        get(b"traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", b"tracestate: a=b"))
    add("fw-traceparent-bad", g, "traceparent invalid + tracestate",
        get(b"traceparent: 00-XYZ-b7ad6b7169203331-01", b"tracestate: a=b"))

    # --- pipelined pairs
    g = "pipeline"
    add("pl-two-gets", g, "two GETs", get() + FOLLOW, expect=2)
    add("pl-post-get", g, "POST with CL + GET", post_cl() + FOLLOW, expect=2)
    add("pl-chunked-get", g, "chunked POST + GET", chunked(b"5\r\nhello\r\n0\r\n\r\n") + FOLLOW, expect=2)
    add("pl-head-get", g, "HEAD + GET", get(line=b"HEAD " + P + b" HTTP/1.1") + FOLLOW, expect=2, head_first=True)
    add("pl-three", g, "three GETs", get() + FOLLOW + SMUGGLED, expect=3)
    add("pl-bad-then-good", g, "bad request (two CLs) + GET",
        post(b"Content-Length: 5", b"Content-Length: 6", body=b"hello!") + FOLLOW, expect=2)
    add("pl-lf-then-crlf", g, "bare-LF request + CRLF request",
        m(b"GET " + P + b" HTTP/1.1", HOST, eol=b"\n") + FOLLOW, expect=2)
    add("pl-get-body-no-cl", g, "GET + bytes that look like a body, no framing",
        get() + b"hello\r\n" + FOLLOW, expect=2)
    return cases


# --------------------------------------------------------------------------------------------
# the client side
# --------------------------------------------------------------------------------------------

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
