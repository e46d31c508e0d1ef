"""A scripted HTTP server for kreach's HTTP tests, on 127.0.0.1 only (issue 19: no network beyond
loopback). It answers each path with the next step of that path's script (the last step repeats)
and logs every request it receives.

    python3 tests/http_server.py SCRIPT.json LOG.jsonl

SCRIPT.json: {"/path": [step, ...], ...}, or for a path {"by_body": [{"contains": "text", "steps":
[step, ...]}, ...], "default": [step, ...]} (the first route whose text the request's body
contains answers, each with its own steps: a model that answers by the problem asked); a step
is an object with any of
  "status" (default 200), "headers" ({name: value}), "body" (a string, or any JSON value, sent
  as JSON), "delay_s" (wait before answering), "drop" (true: the connection dies mid-response, the
  headers promising 100 bytes and 7 sent).
Paths not in the script get 404. It prints "port N" on its first line once it listens (port 0:
the system chooses), then serves until killed. LOG.jsonl gets one line a request, written when
it arrives: {"t": monotonic seconds, "path", "method", "headers": {...}, "body", "inflight": how
many requests were being served at that moment, this one included}.
"""
import http.server
import json
import socket
import sys
import threading
import time

script = {}
steps_taken = {}
lock = threading.Lock()
inflight = 0
log = None


def route(path, body):
    """The steps for a request, and the key of their counter: a path's list, or, for a path
    whose entry is {"by_body": [{"contains": text, "steps": [...]}, ...], "default": [...]},
    the first route whose text the request's body contains (each route counts its own steps)."""
    entry = script.get(path)
    if isinstance(entry, dict):
        for i, r in enumerate(entry.get("by_body", [])):
            if r["contains"] in body:
                return r["steps"], (path, i)
        return entry.get("default"), (path, "default")
    return entry, path


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet: the log file is the record
        pass

    def handle_any(self, method):
        global inflight
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n).decode("utf-8", "replace") if n else ""
        with lock:
            inflight += 1
            now_inflight = inflight
            steps, counter = route(self.path, body)
            k = steps_taken.get(counter, 0)
            steps_taken[counter] = k + 1
            log.write(json.dumps({"t": time.monotonic(), "path": self.path, "method": method,
                                  "headers": dict(self.headers), "body": body, "inflight": now_inflight}) + "\n")
            log.flush()
        try:
            if steps is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            step = steps[min(k, len(steps) - 1)]
            if step.get("delay_s"):
                time.sleep(step["delay_s"])
            if step.get("drop"):
                # the connection dies mid-response: headers promising 100 bytes, 7 sent, closed
                # (a drop before any byte on a kept-alive connection is retried inside libcurl)
                self.close_connection = True
                try:
                    self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            b = step.get("body", "")
            if not isinstance(b, str):
                b = json.dumps(b)
            data = b.encode("utf-8")
            self.send_response(step.get("status", 200))
            for name, value in (step.get("headers") or {}).items():
                self.send_header(name, str(value))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        finally:
            with lock:
                inflight -= 1

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")


def main():
    global script, log
    if len(sys.argv) != 3:
        sys.exit("usage: http_server.py SCRIPT.json LOG.jsonl")
    with open(sys.argv[1]) as f:
        script = json.load(f)
    log = open(sys.argv[2], "a")
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    print("port", srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
