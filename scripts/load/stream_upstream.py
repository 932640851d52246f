"""A backend for `make stream-check`: GET answers SIZE bytes as fast as it can write them;
POST reads the whole body slowly (RATE bytes/s) and answers how many bytes it read.

Usage: stream_upstream.py PORT SIZE RATE
"""
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, SIZE, RATE = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
CHUNK = 64 * 1024


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(SIZE))
        self.end_headers()
        block = b"x" * CHUNK
        sent = 0
        while sent < SIZE:
            n = min(CHUNK, SIZE - sent)
            self.wfile.write(block[:n])
            sent += n

    def do_POST(self):
        remaining = int(self.headers.get("Content-Length", "0"))
        received = 0
        started = time.monotonic()
        while remaining > 0:
            data = self.rfile.read(min(CHUNK, remaining))
            if not data:
                break
            received += len(data)
            remaining -= len(data)
            # Read no faster than RATE: the gateway must hold the client back, not buffer.
            ahead = received / RATE - (time.monotonic() - started)
            if ahead > 0:
                time.sleep(ahead)
        body = str(received).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
