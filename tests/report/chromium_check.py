#!/usr/bin/env python3
"""Opens a kreach report in headless Chromium (Debian's chromium) with the network off, through
the DevTools protocol (a minimal WebSocket client on the standard library: no package beyond
python3 is needed), and prints one JSON object of what it saw:

  console    the console's errors and warnings, uncaught exceptions and log entries of level error
  requests   every URL the page asked for (the file itself included)
  figures    per <section data-figure>: its state (drawn or missing), the sentence of a missing
             one, the data in its SVG's <metadata class="kreach-data">, and per gnuplot plot
             group (<g id="...gnuplot_plot_N"> with its <title>) the number of markers (<use>),
             paths and rects drawn in it
  table      the per-problem table's rows (their data-key, in order), then the order after a
             click on a header (data.sort_header) and after a second click
  links      whether every row's source and record links point at an element of the page
  screenshot the PNG's path, size and the number of distinct colours in it

usage: chromium_check.py REPORT.html SCREENSHOT.png [--sort-header NAME] [--chromium PATH]
Exit status 0 when it ran (the caller judges what it saw), 2 on a usage error, 3 when Chromium
could not be driven."""
import base64, json, os, shutil, socket, struct, subprocess, sys, tempfile, time, urllib.request, zlib


def die(msg, status=3):
    sys.stderr.write("chromium_check.py: %s\n" % msg)
    sys.exit(status)


class WebSocket:
    """RFC 6455, client side: text frames out (masked), frames in (fragmented or not)."""

    def __init__(self, url):
        assert url.startswith("ws://")
        hostport, path = url[5:].split("/", 1)
        host, port = hostport.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        req = ("GET /%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n") % (path, hostport, key)
        self.sock.sendall(req.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                die("the DevTools WebSocket closed during the handshake")
            head += chunk
        status = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status:
            die("the DevTools WebSocket refused the handshake: %r" % status)
        self.buf = head.split(b"\r\n\r\n", 1)[1]

    def send(self, text):
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        if n < 126:
            hdr = struct.pack("!BB", 0x81, 0x80 | n)
        elif n < 65536:
            hdr = struct.pack("!BBH", 0x81, 0x80 | 126, n)
        else:
            hdr = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(hdr + mask + masked)

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                die("the DevTools WebSocket closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self):
        parts = []
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._read(8))[0]
            payload = self._read(n)
            op = b0 & 0x0F
            if op == 8:
                die("the DevTools WebSocket was closed by Chromium")
            if op in (9, 10):  # ping, pong: not used by DevTools
                continue
            parts.append(payload)
            if b0 & 0x80:
                return b"".join(parts).decode()


class Page:
    def __init__(self, ws):
        self.ws, self.next_id, self.events = ws, 0, []

    def call(self, method, **params):
        self.next_id += 1
        my = self.next_id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my:
                if "error" in msg:
                    die("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_event(self, method, timeout_s):
        end = time.time() + timeout_s
        for e in self.events:
            if e["method"] == method:
                return e
        self.ws.sock.settimeout(max(0.1, timeout_s))
        while time.time() < end:
            msg = json.loads(self.ws.recv())
            if "method" in msg:
                self.events.append(msg)
                if msg["method"] == method:
                    return msg
        return None

    def drain(self, seconds):
        """collects the events that come within `seconds`"""
        end = time.time() + seconds
        while True:
            left = end - time.time()
            if left <= 0:
                return
            self.ws.sock.settimeout(left)
            try:
                msg = json.loads(self.ws.recv())
            except socket.timeout:
                return
            if "method" in msg:
                self.events.append(msg)

    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            die("the page's script failed: %s" % json.dumps(r["exceptionDetails"])[:2000])
        return r["result"].get("value")


def png_colours(path):
    """the number of distinct colours of an 8-bit RGB or RGBA PNG (non-interlaced)"""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack("!I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack("!IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError("unexpected PNG format: depth %d, colour type %d" % (depth, ctype))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    colours = set()
    i = 0
    for _ in range(height):
        f = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else (b if pb <= pc else c))) & 255
        for x in range(0, stride, bpp * 4):  # every 4th pixel: enough to tell a blank page
            colours.add(bytes(line[x:x + 3]))
        prev = line
    return len(colours), width, height


INSPECT = r"""
(() => {
  const out = { figures: {}, table: { rows: [] }, links: { ok: true, missing: [] } };
  document.querySelectorAll('section[data-figure]').forEach(s => {
    const f = { state: s.getAttribute('data-state') };
    const m = s.querySelector('p.missing');
    if (m) f.missing = m.textContent;
    const svg = s.querySelector('svg.kreach-figure');
    if (svg) {
      const md = svg.querySelector('metadata.kreach-data');
      f.data = md ? JSON.parse(md.textContent) : null;
      f.plots = [];
      svg.querySelectorAll('g[id*="gnuplot_plot_"]').forEach(g => {
        const t = g.querySelector('title');
        f.plots.push({ title: t ? t.textContent : null, uses: g.querySelectorAll('use').length,
                       paths: g.querySelectorAll('path').length, rects: g.querySelectorAll('rect').length });
      });
      const box = svg.getBoundingClientRect();
      f.width = box.width; f.height = box.height;
    }
    const cap = s.querySelector('figcaption');
    if (cap) f.caption = cap.textContent;
    out.figures[s.getAttribute('data-figure')] = f;
  });
  const t = document.getElementById('problems');
  if (t) {
    out.table.headers = Array.from(t.tHead.rows[0].cells).map(c => c.textContent);
    out.table.rows = Array.from(t.tBodies[0].rows).map(r => r.getAttribute('data-key'));
    t.querySelectorAll('a[href^="#"]').forEach(a => {
      const id = a.getAttribute('href').slice(1);
      if (!document.getElementById(id)) { out.links.ok = false; out.links.missing.push(id); }
    });
    out.table.links = t.querySelectorAll('a[href^="#"]').length;
  }
  return JSON.stringify(out);
})()
"""

SORT = r"""
((name) => {
  const t = document.getElementById('problems');
  const th = Array.from(t.tHead.rows[0].cells).find(c => c.textContent === name);
  if (!th) return JSON.stringify({ error: 'no header ' + name });
  const col = Array.from(t.tHead.rows[0].cells).indexOf(th);
  const read = () => Array.from(t.tBodies[0].rows).map(r => [r.getAttribute('data-key'), r.cells[col].getAttribute('data-sort')]);
  th.click();
  const first = read();
  th.click();
  const second = read();
  return JSON.stringify({ ascending: first, descending: second, aria: th.getAttribute('aria-sort') });
})(%s)
"""


def main(argv):
    args, opts = [], {"sort_header": "vs baseline", "chromium": shutil.which("chromium") or "/usr/bin/chromium"}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--sort-header", "--chromium"):
            if i + 1 >= len(argv):
                die("%s needs a value" % a, 2)
            opts[a[2:].replace("-", "_")] = argv[i + 1]
            i += 2
        else:
            args.append(a)
            i += 1
    if len(args) != 2:
        die(__doc__.split("\n\n")[-1], 2)
    html, shot = os.path.abspath(args[0]), os.path.abspath(args[1])
    if not os.path.isfile(html):
        die("%s: no such file" % html, 2)
    if not os.access(opts["chromium"], os.X_OK):
        die("%s: Chromium is not installed (tools/install-deps installs Debian's chromium)" % opts["chromium"])
    profile = tempfile.mkdtemp(prefix="kreach-chromium-")
    # the network is off: every host name resolves to nothing and every request would go to a
    # proxy on a closed port; a request that leaves the file shows in `requests` all the same
    cmd = [opts["chromium"], "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-extensions", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--disable-default-apps", "--no-default-browser-check",
           "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
           "--remote-debugging-port=0", "--user-data-dir=" + profile, "--window-size=1200,900", "about:blank"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = os.path.join(profile, "DevToolsActivePort")
        end = time.time() + 30
        while not os.path.exists(port_file) or os.path.getsize(port_file) == 0:
            if proc.poll() is not None:
                die("chromium exited with status %d before it listened" % proc.returncode)
            if time.time() > end:
                die("chromium did not open its DevTools port in 30 s")
            time.sleep(0.05)
        port = open(port_file).read().split("\n")[0].strip()
        targets = json.load(urllib.request.urlopen("http://127.0.0.1:%s/json/list" % port, timeout=10))
        page_t = next(t for t in targets if t.get("type") == "page")
        page = Page(WebSocket(page_t["webSocketDebuggerUrl"]))
        for m in ("Runtime.enable", "Log.enable", "Network.enable", "Page.enable"):
            page.call(m)
        page.events.clear()
        url = "file://" + html
        page.call("Page.navigate", url=url)
        if not page.wait_event("Page.loadEventFired", 20):
            die("the page did not finish loading in 20 s")
        page.drain(0.5)
        seen = json.loads(page.eval(INSPECT))
        sort = json.loads(page.eval(SORT % json.dumps(opts["sort_header"])))
        shot_b64 = page.call("Page.captureScreenshot", format="png")["data"]
        with open(shot, "wb") as f:
            f.write(base64.b64decode(shot_b64))
        page.drain(0.2)
        console, requests = [], []
        for e in page.events:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                console.append("console.%s: %s" % (p["type"], " ".join(str(a.get("value", a.get("description"))) for a in p.get("args", []))))
            elif m == "Runtime.exceptionThrown":
                console.append("exception: %s" % p["exceptionDetails"].get("text", ""))
            elif m == "Log.entryAdded" and p["entry"].get("level") in ("error", "warning"):
                console.append("log.%s: %s" % (p["entry"]["level"], p["entry"].get("text", "")))
            elif m == "Network.requestWillBeSent":
                requests.append(p["request"]["url"])
            elif m == "Network.loadingFailed":
                console.append("network: %s %s" % (p.get("errorText", ""), p.get("requestId", "")))
        colours, w, h = png_colours(shot)
        seen.update({"url": url, "console": console, "requests": requests, "sort": sort,
                     "screenshot": {"path": shot, "bytes": os.path.getsize(shot), "width": w, "height": h, "colours": colours}})
        try:
            page.call("Browser.close")
        except SystemExit:
            pass
        print(json.dumps(seen))
    finally:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
