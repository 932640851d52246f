"""The HTTP/1.1 framing and the byte-logging backend of make http-diff (see http_diff.py)."""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
from dataclasses import dataclass

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

