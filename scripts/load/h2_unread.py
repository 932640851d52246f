"""What HTTP/2 clients that never read their answers cost a reverse proxy in resident memory
(make h2-unread, scripts/h2-unread.sh). Four commands:

    python3 h2_unread.py backend PORT
        The backend: HTTP/1.1 on loopback, keep-alive, one thread per connection. GET of a path
        whose last segment is a number N answers N bytes (Content-Length); GET /stats answers
        its counters (requests taken, answers written whole, answers in flight) as JSON.

    python3 h2_unread.py measure PORT PID BACKEND_PORT CONNECTIONS PATH
        One measurement against the proxy on PORT (PID: its first process; its children, such as
        nginx's workers, are counted with it). RSS before (the sum of VmRSS over the processes);
        CONNECTIONS h2c connections (prior knowledge), each: the preface, SETTINGS with
        SETTINGS_INITIAL_WINDOW_SIZE 0, the ACK of the proxy's SETTINGS, then 100 GET streams
        (1, 3, ... 199) for PATH, and no WINDOW_UPDATE ever: no stream may carry a byte of DATA,
        so every answer the proxy takes from the backend stays with the proxy. Only what the proxy
        sends besides DATA is read (SETTINGS, HEADERS, GOAWAY), to see whether it closes the
        connection. The wait: until every request has reached the backend and the proxy's RSS has
        not grown for 1 s, at most 10 s. Then RSS again, the answer bytes left in the kernel's
        buffers between backend and proxy (/proc/net/tcp) and in the proxy's deleted temporary
        files; then the connections are closed in order (FIN, as when a client process exits)
        and the proxy given as long to settle (RSS unchanged for 1 s, the backend idle, at most
        10 s), and RSS and the kernel's buffers once more. Prints one CSV row (FIELDS).

    python3 h2_unread.py fields
        The header of measure's rows.

    python3 h2_unread.py report CSV
        Markdown tables of the CSV's rows (header FIELDS, with round, proxy and size before them):
        MiB per connection by answer size and proxy, median and min-max over the rounds; and what
        became of the answers and the connections.

The frames are written as scripts/load/h2_attacks.py writes them (imported from it)."""

import json
import os
import selectors
import socket
import statistics
import struct
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from h2_attacks import DATA, END_HEADERS, END_STREAM, GOAWAY, HEADERS, PREFACE, RST_STREAM, SETTINGS, frame, request

ACK = 0x1
SETTINGS_INITIAL_WINDOW_SIZE = 4
STREAMS = 100
WAIT = 10.0       # s: the longest wait for the proxy to take the answers, and to settle after
QUIET = 1.0       # s: RSS that has not grown (or, settling, changed) this long is taken as final
STEP = 0.1        # s between RSS samples
NOISE_KIB = 64    # growth below this, from the last level, is not growth
FIELDS = ["connections", "rss_before_kib", "rss_after_kib", "kib_per_connection", "rss_settled_kib",
          "closed", "goaway", "answers_begun", "backend_requests", "backend_whole", "queued_kib", "spilled_kib",
          "queued_settled_kib", "wait_s"]


# The backend.

class Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests = self.whole = self.in_flight = 0

    def add(self, **deltas):
        with self.lock:
            for name, delta in deltas.items():
                setattr(self, name, getattr(self, name) + delta)


COUNTERS = Counters()
BODIES = {}


class Backend(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path == "/stats":
            with COUNTERS.lock:
                body = json.dumps({"requests": COUNTERS.requests, "whole": COUNTERS.whole,
                                   "in_flight": COUNTERS.in_flight}).encode()
            return self.answer(200, body, "application/json")
        last = path.rstrip("/").rsplit("/", 1)[-1]
        if not last.isdigit():
            return self.answer(404, b"not found\n", "text/plain")
        size = int(last)
        if size not in BODIES:
            BODIES[size] = b"x" * size
        COUNTERS.add(requests=1, in_flight=1)
        try:
            self.answer(200, BODIES[size], "application/octet-stream")
            COUNTERS.add(whole=1)
        finally:
            COUNTERS.add(in_flight=-1)

    def answer(self, status, body, kind):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class BackendServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 4096  # every stream of every connection may open a backend connection at once

    def handle_error(self, request, client_address):
        pass  # a proxy that drops its backend connection mid-answer (a client gone): not news


def backend(port):
    BackendServer(("127.0.0.1", port), Backend).serve_forever()


def backend_stats(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=5) as answer:
        return json.load(answer)


# The proxy's processes.

def processes(root):
    """root and its descendants (nginx's master and workers)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parents[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                pass
    found, frontier = [root], [root]
    while frontier:
        children = [pid for pid, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def rss_kib(pids):
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as status:
                total += next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            pass
    return total


def spilled_kib(pids):
    """Bytes in deleted files the processes hold open: nginx's buffered answers, written to
    temporary files it unlinks at once (proxy_temp_path), which RSS does not show."""
    total = 0
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}").endswith(" (deleted)"):
                    total += os.stat(f"/proc/{pid}/fd/{fd}").st_size
            except OSError:
                pass
    return total // 1024


def queued_kib(backend_port):
    """Bytes of answers in the kernel's buffers between the backend and the proxy: written by the
    backend, not yet read by the proxy (the proxy's receive queues and the backend's send
    queues), from /proc/net/tcp. No process's RSS holds them."""
    total = 0
    with open("/proc/net/tcp") as table:
        next(table)
        for line in table:
            fields = line.split()
            local, remote, queues = int(fields[1].split(":")[1], 16), int(fields[2].split(":")[1], 16), fields[4]
            tx, rx = (int(q, 16) for q in queues.split(":"))
            if remote == backend_port:
                total += rx
            elif local == backend_port:
                total += tx
    return total // 1024


# The clients.

class UnreadConnection:
    """An h2c connection that opens STREAMS GETs with every stream window at 0."""

    def __init__(self, port, block):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buffer = b""
        self.closed = False
        self.goaway = None
        self.begun = set()
        self.sock.sendall(PREFACE + frame(SETTINGS, 0, 0, struct.pack(">HI", SETTINGS_INITIAL_WINDOW_SIZE, 0)))
        while not self.settings_seen():
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the proxy closed the connection before its SETTINGS")
            self.buffer += chunk
        self.sock.sendall(frame(SETTINGS, ACK, 0) + b"".join(
            frame(HEADERS, END_HEADERS | END_STREAM, 2 * i + 1, block) for i in range(STREAMS)))
        self.sock.setblocking(False)

    def settings_seen(self):
        """Whether the proxy's SETTINGS (not an ACK) has arrived; the frames after it stay in the buffer."""
        while len(self.buffer) >= 9:
            length = int.from_bytes(self.buffer[:3], "big")
            if len(self.buffer) < 9 + length:
                return False
            kind, flags = self.buffer[3], self.buffer[4]
            self.buffer = self.buffer[9 + length:]
            if kind == SETTINGS and not flags & ACK:
                return True
        return False

    def read(self):
        """What has arrived: the answers' HEADERS, a GOAWAY, the end of the connection."""
        try:
            chunk = self.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.closed = True
            return
        self.buffer += chunk
        while len(self.buffer) >= 9:
            length = int.from_bytes(self.buffer[:3], "big")
            if len(self.buffer) < 9 + length:
                break
            kind, stream = self.buffer[3], int.from_bytes(self.buffer[5:9], "big") & 0x7FFFFFFF
            body = self.buffer[9:9 + length]
            self.buffer = self.buffer[9 + length:]
            if kind in (HEADERS, DATA, RST_STREAM) and stream:
                self.begun.add(stream)
            if kind == GOAWAY and self.goaway is None:
                self.goaway = int.from_bytes(body[4:8], "big")
                self.closed = True

    def close(self):
        self.sock.close()


def measure(port, root, backend_port, count, path):
    block = request("GET", path)
    pids = processes(root)
    before = rss_kib(pids)
    stats0 = backend_stats(backend_port)
    connections = [UnreadConnection(port, block) for _ in range(count)]
    selector = selectors.DefaultSelector()
    for connection in connections:
        selector.register(connection.sock, selectors.EVENT_READ, connection)

    # Until every request has reached the backend and RSS has stopped growing.
    start = time.monotonic()
    level, grown = rss_kib(pids), start
    arrived = False
    while time.monotonic() - start < WAIT:
        for key, _ in selector.select(STEP):
            key.data.read()
            if key.data.closed:
                selector.unregister(key.fileobj)
        now, rss = time.monotonic(), rss_kib(pids)
        if rss > level + NOISE_KIB:
            level, grown = rss, now
        if not arrived:
            arrived = backend_stats(backend_port)["requests"] - stats0["requests"] >= count * STREAMS
        if arrived and now - grown >= QUIET:
            break
    waited = time.monotonic() - start
    after = rss_kib(pids)
    spilled = spilled_kib(pids)
    queued = queued_kib(backend_port)
    stats = backend_stats(backend_port)
    closed = sum(c.closed for c in connections)
    goaways = sorted({c.goaway for c in connections if c.goaway is not None})
    begun = sum(len(c.begun) for c in connections)
    selector.close()
    for connection in connections:
        connection.close()

    # Settling: RSS unchanged for QUIET and no answer left in flight at the backend.
    start = time.monotonic()
    level, steady = rss_kib(pids), start
    while time.monotonic() - start < WAIT:
        time.sleep(STEP)
        now, rss = time.monotonic(), rss_kib(pids)
        if abs(rss - level) > NOISE_KIB:
            level, steady = rss, now
        if now - steady >= QUIET and backend_stats(backend_port)["in_flight"] == 0:
            break
    settled = rss_kib(pids)
    queued_settled = queued_kib(backend_port)

    row = [count, before, after, round((after - before) / count, 1), settled, closed,
           " ".join(map(str, goaways)) or "-", begun, stats["requests"] - stats0["requests"],
           stats["whole"] - stats0["whole"], queued, spilled, queued_settled, round(waited, 1)]
    print(",".join(map(str, row)))


# The report.

def median_spread(values, scale, digits):
    values = [v * scale for v in values]
    median = f"{statistics.median(values):.{digits}f}"
    if len(values) == 1:
        return median
    return f"{median} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def size_name(size):
    return f"{size // 1048576} MiB" if size % 1048576 == 0 else f"{size // 1024} KiB" if size % 1024 == 0 else f"{size} B"


def report(path):
    with open(path) as csv:
        header = csv.readline().strip().split(",")
        rows = [dict(zip(header, line.strip().split(","))) for line in csv if line.strip()]
    if not rows:
        print("no measurements")
        return
    proxies = list(dict.fromkeys(r["proxy"] for r in rows))
    sizes = sorted({int(r["size"]) for r in rows})
    count = rows[0]["connections"]
    rounds = len({r["round"] for r in rows})
    cell = {}
    for r in rows:
        cell.setdefault((int(r["size"]), r["proxy"]), []).append(r)

    print(f"Resident memory per connection that never reads its answers (MiB; median, min–max over rounds)")
    print()
    print("| answer size | " + " | ".join(proxies) + " |")
    print("|---|" + "---:|" * len(proxies))
    for size in sizes:
        values = [median_spread([float(r["kib_per_connection"]) for r in cell[(size, p)]], 1 / 1024, 1)
                  if (size, p) in cell else "-" for p in proxies]
        print(f"| {size_name(size)} × {STREAMS} streams | " + " | ".join(values) + " |")
    print()
    print(f"{count} connections × {STREAMS} streams, {rounds} round{'s' if rounds != 1 else ''}, "
          f"{time.strftime('%Y-%m-%d')}; RSS summed over the proxy's processes, after minus before; "
          f"a fresh proxy for every measurement.")
    print()
    print("Where the answers were at the end of the wait (medians): answers the backend wrote whole, of "
          "the requests it got; connections the proxy closed; MiB per connection of answers still in the "
          "kernel's socket buffers between backend and proxy (no process's RSS), in the proxy's deleted "
          "temporary files (page cache, no RSS either); RSS the proxy kept once the clients were gone "
          "(MiB per connection; and answers still in the sockets then: backend connections it kept open)")
    print()
    print("| answer size | " + " | ".join(proxies) + " |")
    print("|---|" + "---|" * len(proxies))
    for size in sizes:
        values = []
        for p in proxies:
            rs = cell.get((size, p))
            if not rs:
                values.append("-")
                continue
            med = lambda name: statistics.median(float(r[name]) for r in rs)
            closed = f"closed {med('closed'):.0f}/{count}"
            codes = sorted({r["goaway"] for r in rs} - {"-"})
            if codes:
                closed += f" (GOAWAY {', '.join(codes)})"
            per_connection = lambda name: med(name) / 1024 / int(count)
            text = f"written {med('backend_whole'):.0f}/{med('backend_requests'):.0f}, {closed}"
            text += f", in sockets {per_connection('queued_kib'):.1f}"
            if med("spilled_kib") > 0:
                text += f", on disk {per_connection('spilled_kib'):.1f}"
            left = [(float(r["rss_settled_kib"]) - float(r["rss_before_kib"])) / int(count) for r in rs]
            text += f", kept {statistics.median(left) / 1024:.1f}"
            if med("queued_settled_kib") > 0:
                text += f" (+ {per_connection('queued_settled_kib'):.1f} in sockets)"
            values.append(text)
        print(f"| {size_name(size)} | " + " | ".join(values) + " |")


def main():
    command = sys.argv[1]
    if command == "backend":
        backend(int(sys.argv[2]))
    elif command == "measure":
        port, pid, backend_port, count = map(int, sys.argv[2:6])
        measure(port, pid, backend_port, count, sys.argv[6])
    elif command == "fields":
        print(",".join(FIELDS))
    elif command == "report":
        report(sys.argv[2])
    else:
        sys.exit(f"unknown command {command} (backend, measure, fields, report)")


if __name__ == "__main__":
    main()
