"""The HTTP API end to end (docs/HTTP-API.md): the built navsyncd on port 0,
every status of the table, each answer checked against docs/openapi.yaml
with openapi-core; a change over HTTP reaching line-protocol, WebSocket and
SSE watchers as one revision; durability across a restart; SSE resume
inside and beyond the history; a slow SSE reader resynced; ?token= and its
throttle; events and changes over TLS; 503 while the backplane is away.

Usage: api_test.py BIN_DIR SPEC"""
import base64
import json
import os
import re
import select
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

from openapi_core import OpenAPI
from openapi_core.testing import MockRequest, MockResponse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from navsyncd import start_daemon, stop_daemon  # noqa: E402

BIN, SPEC = sys.argv[1], sys.argv[2]
openapi = OpenAPI.from_file_path(SPEC)
# Every bounded wait (a daemon start, a reply, Redis); generous for a loaded
# machine, and free when the answer comes at once.
WAIT = 20.0
passed = 0
work = tempfile.mkdtemp(prefix="navsync-http-")


def check(name, condition, detail=""):
    global passed
    if not condition:
        raise AssertionError("%s %s" % (name, detail))
    passed += 1
    print("ok   " + name, flush=True)


class Daemon:
    """navsyncd on port 0; ready once it logs `listening on`; stopped by PID."""

    def __init__(self, *args, tls=False):
        self.args = list(args)
        self.tls = tls
        self.start()

    def start(self):
        # One port per listener: the plain one always, the TLS one when asked for.
        def ports(text):
            plain = re.search(r"listening on 127\.0\.0\.1:(\d+)", text)
            secure = re.search(r"listening on tls://127\.0\.0\.1:(\d+)", text)
            if plain and (secure or not self.tls):
                return int(plain.group(1)), int(secure.group(1)) if secure else None
            return None

        self.log_path = os.path.join(work, "daemon-%d.log" % time.monotonic_ns())
        self.process, (self.port, self.tls_port) = start_daemon(
            BIN, self.log_path, ["--listen", "127.0.0.1:0", *self.args], ready=ports, timeout=WAIT)

    def stop(self):
        stop_daemon(self.process, timeout=WAIT)


def connect(port, tls=False):
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    if tls:
        context = ssl.create_default_context(cafile=os.path.join(work, "cert.pem"))
        sock = context.wrap_socket(sock, server_hostname="localhost")
    return sock


class Answer:
    def __init__(self, status, headers, body, closed):
        self.status, self.headers, self.body, self.closed = status, headers, body, closed

    def json(self):
        return json.loads(self.body)


def read_head(sock, buffer=b""):
    while b"\r\n\r\n" not in buffer:
        chunk = sock.recv(65536)
        if not chunk:
            raise EOFError("closed before a head: %r" % buffer)
        buffer += chunk
    head, rest = buffer.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        name, value = line.split(":", 1)
        headers[name.strip().lower()] = value.strip()
    return status, headers, rest


def read_answer(sock, buffer=b"", head_only=False):
    """One response: head and Content-Length body; then whether the daemon closed."""
    status, headers, rest = read_head(sock, buffer)
    while status == 100:
        status, headers, rest = read_head(sock, rest)
    length = 0 if head_only or status == 304 else int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    body, rest = rest[:length], rest[length:]
    closed = False
    if headers.get("connection") == "close":
        sock.settimeout(WAIT)
        try:
            while True:
                extra = sock.recv(65536)
                if not extra:
                    closed = True
                    break
                rest += extra
        except (ConnectionResetError, socket.timeout):
            closed = True
        check("nothing follows a closing answer", rest == b"", repr(rest))
    return Answer(status, headers, body, closed), rest


def request_bytes(method, path, port, headers=None, body=None):
    headers = dict(headers or {})
    headers.setdefault("Host", "127.0.0.1:%d" % port)
    if body is not None and "Content-Length" not in headers and "Transfer-Encoding" not in headers:
        headers["Content-Length"] = str(len(body))
    text = "%s %s HTTP/1.1\r\n" % (method, path) + "".join("%s: %s\r\n" % kv for kv in headers.items()) + "\r\n"
    return text.encode() + (body or b"")


def validate(method, path, headers, body, answer):
    """The answer checked against the OpenAPI document."""
    query = path.split("?", 1)[1] if "?" in path else ""
    args = dict(pair.split("=", 1) for pair in query.split("&") if "=" in pair)
    request = MockRequest("http://127.0.0.1:7878", method.lower(), path.split("?")[0], args=args,
                          headers={k: v for k, v in (headers or {}).items()}, data=body or b"",
                          content_type=(headers or {}).get("Content-Type", "application/json"))
    content_type = answer.headers.get("content-type", "application/json")
    response = MockResponse(answer.body, status_code=answer.status, headers=answer.headers,
                            content_type=content_type.split(";")[0])
    openapi.validate_response(request, response)


def http(method, path, port, headers=None, body=None, tls=False, spec=True):
    sock = connect(port, tls)
    try:
        sock.sendall(request_bytes(method, path, port, headers, body))
        answer, _ = read_answer(sock, head_only=(method == "HEAD"))
    finally:
        sock.close()
    if spec and path.startswith("/rooms/") and method != "HEAD":
        validate(method, path, headers, body, answer)
    return answer


JSON = {"Content-Type": "application/json"}


def post(port, room, change, token=None, extra=None, tls=False):
    headers = dict(JSON)
    if token:
        headers["Authorization"] = "Bearer " + token
    headers.update(extra or {})
    body = change if isinstance(change, bytes) else json.dumps(change).encode()
    return http("POST", "/rooms/" + room, port, headers, body, tls)


def bearer(token):
    return {"Authorization": "Bearer " + token}


class EventStream:
    """An SSE client on a raw socket: the head, then events as dicts."""

    def __init__(self, port, path, headers=None, tls=False, rcvbuf=None):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(WAIT)
        self.sock.connect(("127.0.0.1", port))
        if tls:
            context = ssl.create_default_context(cafile=os.path.join(work, "cert.pem"))
            self.sock = context.wrap_socket(self.sock, server_hostname="localhost")
        self.sock.sendall(request_bytes("GET", path, port, headers))
        self.status, self.headers, self.buffer = read_head(self.sock)

    def blocks(self):
        """Every complete block so far and to come, one at a time (bounded wait)."""
        while True:
            while b"\n\n" not in self.buffer:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise EOFError("stream ended")
                self.buffer += chunk
            block, self.buffer = self.buffer.split(b"\n\n", 1)
            yield block.decode()

    def next_event(self, skip_pings=True):
        for block in self.blocks():
            if (skip_pings and block.startswith(":")) or block.startswith("retry:"):
                continue
            fields = {}
            for line in block.split("\n"):
                name, value = line.split(": ", 1)
                fields[name] = value
            if "data" in fields:
                fields["json"] = json.loads(fields["data"])
            return fields

    def close(self):
        self.sock.close()


class LineWatcher:
    def __init__(self, port, token, room):
        self.sock = connect(port)
        self.buffer = b""
        for line in ["AUTH " + token, "JOIN " + room, "WATCH"]:
            self.sock.sendall((line + "\n").encode())
            self.line()

    def line(self):
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise EOFError
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()


class WebSocketWatcher:
    """A minimal RFC 6455 client: masked text frames out, text frames in."""

    def __init__(self, port, token, room):
        self.sock = connect(port)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(request_bytes("GET", "/ws", port, {
            "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": key}))
        status, _, self.buffer = read_head(self.sock)
        check("WebSocket upgrade", status == 101)
        for line in ["AUTH " + token, "JOIN " + room, "WATCH"]:
            self.send(line)
            self.message()

    def send(self, text):
        payload = text.encode()
        mask = os.urandom(4)
        self.sock.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def need(self, count):
        while len(self.buffer) < count:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise EOFError
            self.buffer += chunk

    def message(self):
        self.need(2)
        length = self.buffer[1] & 0x7F
        start = 2
        if length == 126:
            self.need(4)
            length, start = int.from_bytes(self.buffer[2:4], "big"), 4
        self.need(start + length)
        payload, self.buffer = self.buffer[start:start + length], self.buffer[start + length:]
        return payload.decode()


def metric(port, token, name):
    text = http("GET", "/metrics", port, bearer(token), spec=False).body.decode()
    found = re.search(r"^%s (\d+)$" % re.escape(name), text, re.M)
    return int(found.group(1)) if found else None


def make_certificate():
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", os.path.join(work, "key.pem"), "-out", os.path.join(work, "cert.pem"), "-days", "2",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=30)


# ----------------------------------------------------------------------------

def test_status_table():
    tokens = os.path.join(work, "tokens")
    with open(tokens, "w") as f:
        f.write("control * ctl-secret-token ops\nview * view-secret-token wall\ncontrol hall,lobby hall-secret-token desk\n")
    d = Daemon("--state", "none", "--tokens", tokens, "--max-line", "256")
    p = d.port
    try:
        a = http("GET", "/rooms/hall", p)
        check("401 without a credential, with a Bearer challenge", a.status == 401 and "bearer" in a.headers["www-authenticate"].lower())
        check("401's body is the API's error", a.json()["error"] == "auth-required")
        a = http("GET", "/rooms/hall", p, {"Authorization": "Basic b3BzOmN0bC1zZWNyZXQtdG9rZW4="})
        check("401 auth-failed for a Basic credential, with a Bearer challenge",
              a.status == 401 and a.json()["error"] == "auth-failed" and "bearer" in a.headers["www-authenticate"].lower())
        a = http("GET", "/rooms/hall", p, {"Authorization": "Bearer"})
        check("Bearer with no token is no credential: 401 auth-required", a.status == 401 and a.json()["error"] == "auth-required")
        a = http("GET", "/rooms/hall", p, bearer("view-secret-token"))
        check("200 and ETag on GET", a.status == 200 and a.headers["etag"] == '"0"' and a.json()["rev"] == 0)
        check("GET /rooms/NAME may be revalidated", a.headers["cache-control"] == "no-cache")
        a = http("GET", "/rooms/hall", p, {**bearer("view-secret-token"), "If-None-Match": '"0"'})
        check("304 for the current ETag, no body", a.status == 304 and a.body == b"" and a.headers["etag"] == '"0"')
        a = http("GET", "/rooms/hall", p, {**bearer("view-secret-token"), "If-None-Match": '"7"'})
        check("200 for another ETag", a.status == 200)

        a = post(p, "hall", {"op": "push", "screen": "blue", "data": "on the big screen"}, "ctl-secret-token")
        check("200, the document after the change, its ETag", a.status == 200 and a.headers["etag"] == '"1"'
              and a.json()["route"] == "/red/blue:on%20the%20big%20screen")
        a = post(p, "hall", {"op": "pop"}, "ctl-secret-token", {"If-Match": '"0"'})
        check("412 with current and its ETag", a.status == 412 and a.json() == {"error": "conflict", "current": 1}
              and a.headers["etag"] == '"1"')
        a = post(p, "hall", {"op": "pop"}, "ctl-secret-token", {"If-Match": '"1"'})
        check("If-Match that matches applies", a.status == 200 and a.headers["etag"] == '"2"')
        a = post(p, "hall", {"op": "pop"}, "ctl-secret-token", {"If-Match": "1"})
        check("400 for an If-Match that is not one quoted revision", a.status == 400 and a.json()["error"] == "bad-args")
        for body, code in [({"op": "push", "screen": "purple"}, "unknown-screen"), ({"op": "pop"}, "at-root"),
                           ({"op": "dismiss"}, "no-sheet"), ({"op": "open", "route": "red"}, "bad-route"),
                           ({"op": "push", "screen": "red", "data": "x"}, "bad-args"),
                           ({"op": "push", "screen": "blue", "data": "x" * 300}, "bad-args"),
                           ({"op": "push", "screen": "blue", "data": "tab\there"}, "bad-args")]:
            a = post(p, "hall", body, "ctl-secret-token")
            check("422 %s for %s" % (code, body["op"]), a.status == 422 and a.json()["error"] == code, a.body)
        for body in [b"{", b"[]", b'{"op":"pop",}', b'{"op":"pop","op":"root"}', b'{"op":"jump"}',
                     b'{"op":"pop","screen":"red"}', b'{"op":"push","screen":1}']:
            a = post(p, "hall", body, "ctl-secret-token")
            check("400 bad-args for %r" % body, a.status == 400 and a.json()["error"] == "bad-args" and not a.closed)
        a = post(p, "bad!name", {"op": "pop"}, "ctl-secret-token")
        check("400 for a bad room name", a.status == 400 and a.closed)
        a = post(p, "bad!name", {"op": "pop"}, "hall-secret-token")
        check("403 for a bad room name under a list grant", a.status == 403)
        a = post(p, "kitchen", {"op": "pop"}, "hall-secret-token")
        check("403 for a room outside the grant", a.status == 403 and a.closed)
        a = post(p, "hall", {"op": "pop"})
        check("401 for a POST without a credential, closed", a.status == 401 and a.closed)
        a = post(p, "hall", {"op": "pop"}, "view-secret-token")
        check("403 for a view grant's POST, closed", a.status == 403 and a.closed)
        a = post(p, "hall", {"op": "pop"}, "ctl-secret-token", {"Origin": "http://evil.example"})
        check("403 for a foreign Origin, closed", a.status == 403 and a.closed)
        a = post(p, "hall", {"op": "select", "screen": "green"}, "ctl-secret-token", {"Origin": "http://127.0.0.1:%d" % p})
        check("the daemon's own Origin may POST", a.status == 200)
        a = post(p, "hall", {"op": "pop"}, "ctl-secret-token", {"Content-Type": "text/plain"})
        check("415 for text/plain, closed", a.status == 415 and a.closed)
        a = post(p, "hall", {"op": "pop"}, "ctl-secret-token", {"Content-Type": "application/x-www-form-urlencoded"})
        check("415 for a form, closed", a.status == 415 and a.closed)
        a = post(p, "hall", {"op": "select", "screen": "green"}, "ctl-secret-token",
                 {"Content-Type": "application/json; charset=utf-8"})
        check("application/json with parameters is taken", a.status == 200)
        a = post(p, "hall", b"5\r\n{\"op\"\r\n0\r\n\r\n", "ctl-secret-token", {"Transfer-Encoding": "chunked"})
        check("411 for a chunked body, closed", a.status == 411 and a.closed)
        sock = connect(p)
        sock.sendall(request_bytes("POST", "/rooms/hall", p, {**JSON, **bearer("ctl-secret-token")}))
        a, _ = read_answer(sock)
        check("411 without Content-Length, closed", a.status == 411 and a.closed)
        sock.close()
        sock = connect(p)
        sock.sendall(request_bytes("POST", "/rooms/hall", p, {**JSON, **bearer("ctl-secret-token"), "Content-Length": "9000"}))
        a, _ = read_answer(sock)
        check("413 for a body over 8 KiB, before it is sent, closed", a.status == 413 and a.closed)
        validate("POST", "/rooms/hall", JSON, b"{}", a)
        sock.close()

        # An answer before the body is read closes: a body shaped like a request is never served.
        smuggled = request_bytes("GET", "/rooms/hall", p, bearer("view-secret-token"))
        sock = connect(p)
        sock.sendall(request_bytes("POST", "/rooms/hall", p, {"Content-Type": "text/plain", **bearer("ctl-secret-token")},
                                   smuggled))
        a, rest = read_answer(sock)
        check("a body answered before it is read is not taken for a request", a.status == 415 and a.closed and rest == b"")
        sock.close()

        # Expect: 100-continue only once the checks before the body passed.
        sock = connect(p)
        body = json.dumps({"op": "select", "screen": "red"}).encode()
        sock.sendall(request_bytes("POST", "/rooms/hall", p, {**JSON, **bearer("ctl-secret-token"), "Expect": "100-continue",
                                                               "Content-Length": str(len(body))}))
        status, _, rest = read_head(sock)
        check("100 Continue", status == 100)
        sock.sendall(body)
        a, _ = read_answer(sock, rest)
        check("then 200", a.status == 200)
        sock.close()
        sock = connect(p)
        sock.sendall(request_bytes("POST", "/rooms/hall", p, {**JSON, **bearer("view-secret-token"), "Expect": "100-continue",
                                                               "Content-Length": "20"}))
        status, _, _ = read_head(sock)
        check("no 100 Continue for a refused POST", status == 403)
        sock.close()

        # Keep-alive: several requests on one connection, answered in order.
        sock = connect(p)
        pipelined = b"".join(request_bytes("POST", "/rooms/lobby", p, {**JSON, **bearer("ctl-secret-token")},
                                           json.dumps({"op": "push", "screen": "blue", "data": str(i)}).encode())
                             for i in range(5))
        sock.sendall(pipelined + request_bytes("GET", "/rooms/lobby", p, bearer("ctl-secret-token")))
        rest, revisions = b"", []
        for _ in range(6):
            a, rest = read_answer(sock, rest)
            revisions.append(a.json()["rev"])
        check("pipelined changes answered in order", revisions == [1, 2, 3, 4, 5, 5], revisions)
        sock.close()

        a = http("GET", "/nope", p, spec=False)
        check("404 for an unknown path", a.status == 404)
        a = http("OPTIONS", "/rooms/hall", p, {"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}, spec=False)
        check("no CORS preflight: 405 without Access-Control-*", a.status == 405
              and not any(h.startswith("access-control") for h in a.headers) and a.headers["allow"] == "GET, HEAD, POST")
        a = http("HEAD", "/rooms/hall/events", p, bearer("view-secret-token"))
        check("HEAD on events is 405 Allow: GET", a.status == 405 and a.headers["allow"] == "GET")
        a = http("HEAD", "/rooms/hall", p, bearer("view-secret-token"))
        check("HEAD on a room", a.status == 200 and a.body == b"")
        a = http("GET", "/rooms/hall?token=ctl-secret-token", p)
        check("?token= is ignored off the events path", a.status == 401)
        a = http("GET", "/rooms/hall", p, {**bearer("view-secret-token"), "Host": "evil.example"})
        check("403 for a foreign Host", a.status == 403)

        # Events: ?token=, Origin, since, name; the stream is a member.
        s = EventStream(p, "/rooms/hall/events?token=view-secret-token&name=wall-1")
        check("events with ?token=", s.status == 200 and s.headers["content-type"] == "text/event-stream"
              and s.headers["cache-control"] == "no-store")
        first = next(s.blocks())
        check("retry first, a block of its own", first == "retry: 2000")
        e = s.next_event()
        check("then a state event", e["event"] == "state" and e["id"] == str(e["json"]["rev"]))
        a = http("GET", "/rooms/hall/members", p, bearer("view-secret-token"))
        check("the stream is a member, named by ?name=", a.status == 200 and
              {"id": a.json()["members"][0]["id"], "name": "wall-1", "role": "view", "at": None} in a.json()["members"])
        s.close()
        for path, status in [("/rooms/hall/events?since=x&token=view-secret-token", 400),
                             ("/rooms/hall/events?name=a%20b&token=view-secret-token", 400),
                             ("/rooms/kitchen/events?token=hall-secret-token", 403)]:
            s = EventStream(p, path)
            check("events %s is %d" % (path, status), s.status == status)
            s.close()
        s = EventStream(p, "/rooms/hall/events", {**bearer("view-secret-token"), "Origin": "http://evil.example"})
        check("events from a foreign Origin is 403", s.status == 403)
        s.close()

        # A failed ?token= counts: the third on a connection closes it, and the address is throttled.
        sock = connect(p)
        statuses = []
        rest = b""
        for i in range(3):
            sock.sendall(request_bytes("GET", "/rooms/hall/events?token=guess-%d" % i, p))
            a, rest = read_answer(sock, rest)
            statuses.append((a.status, a.closed))
        check("a third failed ?token= closes the connection", statuses == [(401, False), (401, False), (401, True)], statuses)
        sock.close()
        throttled = None
        for i in range(30):
            a = http("GET", "/rooms/hall/events?token=guess-x%d" % i, p)
            if "retry-after" in a.headers:
                throttled = a
                break
        check("failed ?token= are throttled like every credential", throttled is not None and throttled.status == 401)
        a = http("GET", "/rooms/hall", p, bearer("ctl-secret-token"))
        check("a throttled address's good token is not checked", a.status == 401 and "retry-after" in a.headers)
    finally:
        d.stop()

    # 503 while the backplane is away: a Redis of the test's own, stopped under the daemon.
    # The port stays bound here (SO_REUSEADDR, never listening) until the end:
    # no daemon of another test binding port 0 is given it meanwhile, yet
    # redis-server (SO_REUSEADDR too) can listen on it, and once Redis is
    # killed the daemon's reconnects are refused, never answered by a stranger.
    free = socket.socket()
    free.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    free.bind(("127.0.0.1", 0))
    redis_port = free.getsockname()[1]
    redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                              "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    d = None
    try:
        deadline = time.monotonic() + WAIT
        while True:
            try:
                socket.create_connection(("127.0.0.1", redis_port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        d = Daemon("--backplane", "redis://127.0.0.1:%d" % redis_port)
        check("GET with the backplane up", http("GET", "/rooms/hall", d.port).status == 200)
        redis.kill()
        redis.wait(WAIT)
        deadline = time.monotonic() + WAIT
        while http("GET", "/rooms/hall", d.port).status != 503:
            if time.monotonic() > deadline:
                raise AssertionError("the daemon never noticed Redis was gone")
            time.sleep(0.05)
        for method, path in [("GET", "/rooms/hall"), ("GET", "/rooms/hall/members"), ("GET", "/rooms/hall/events")]:
            a = http(method, path, d.port)
            check("503 for %s while the backplane is away" % path, a.status == 503 and a.json()["error"] == "unavailable")
        a = post(d.port, "hall", {"op": "pop"})
        check("503 for a POST while the backplane is away", a.status == 503 and a.json()["error"] == "unavailable")
    finally:
        if d:
            d.stop()
        if redis.poll() is None:
            redis.kill()
            redis.wait(WAIT)
        free.close()


def test_one_revision_everywhere_and_durability():
    state = os.path.join(work, "state.json")
    d = Daemon("--state", state)
    try:
        line = LineWatcher(d.port, "x", "hall") if False else None
        line = LineWatcher.__new__(LineWatcher)
        line.sock, line.buffer = connect(d.port), b""
        line.sock.sendall(b"JOIN hall\nWATCH\n")
        line.line(), line.line()
        ws = WebSocketWatcher.__new__(WebSocketWatcher)
        ws.sock = connect(d.port)
        key = base64.b64encode(os.urandom(16)).decode()
        ws.sock.sendall(request_bytes("GET", "/ws", d.port, {"Upgrade": "websocket", "Connection": "Upgrade",
                                                              "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": key}))
        status, _, ws.buffer = read_head(ws.sock)
        check("WebSocket upgrade", status == 101)
        ws.send("JOIN hall")
        ws.message()
        ws.send("WATCH")
        ws.message()
        sse = EventStream(d.port, "/rooms/hall/events")
        sse.next_event()
        a = post(d.port, "hall", {"op": "present", "screen": "blue", "data": "note"})
        rev = a.json()["rev"]
        check("the POST's answer", a.status == 200 and a.headers["etag"] == '"%d"' % rev)
        expected = "EVENT %d present %s" % (rev, a.json()["route"])
        check("the line-protocol watcher sees it", line.line() == expected)
        check("the WebSocket watcher sees it", ws.message() == expected)
        e = sse.next_event()
        check("the SSE watcher sees it, one revision", e["event"] == "change" and e["id"] == str(rev)
              and e["json"] == {"rev": rev, "op": "present", "route": a.json()["route"]}, e)
        validate_event(e)
        for sock in [line.sock, ws.sock, sse.sock]:
            sock.close()
        post(d.port, "hall", {"op": "open", "route": "/green/blue:x%20y"})
        before = http("GET", "/rooms/hall", d.port)
        d.stop()
        d.start()
        after = http("GET", "/rooms/hall", d.port)
        check("a change over HTTP survives a restart", after.json() == before.json()
              and after.headers["etag"] == before.headers["etag"])
    finally:
        d.stop()


def validate_event(event):
    """A change event's data against the document's ChangeEvent schema."""
    from jsonschema import validate as schema_validate
    import yaml
    with open(SPEC) as f:
        spec = yaml.safe_load(f)
    schema_validate(event["json"], spec["components"]["schemas"]["ChangeEvent"])


def test_resume():
    d = Daemon("--state", "none", "--history", "3")
    try:
        for screen in ["green", "blue", "red", "green", "blue"]:
            post(d.port, "hall", {"op": "push", "screen": screen})
        s = EventStream(d.port, "/rooms/hall/events", {"Last-Event-ID": "3"})
        next(s.blocks())
        e1, e2 = s.next_event(), s.next_event()
        check("resume inside the history: the missed changes, no state",
              (e1["event"], e1["id"], e2["event"], e2["id"]) == ("change", "4", "change", "5"))
        post(d.port, "hall", {"op": "pop"})
        e = s.next_event()
        check("then live changes", e["event"] == "change" and e["id"] == "6")
        s.close()
        s = EventStream(d.port, "/rooms/hall/events?since=4")
        next(s.blocks())
        check("?since= resumes too", s.next_event()["id"] == "5")
        s.close()
        s = EventStream(d.port, "/rooms/hall/events?since=5", {"Last-Event-ID": "1"})
        next(s.blocks())
        e = s.next_event()
        check("beyond the history: a fresh state (Last-Event-ID wins)", e["event"] == "state" and e["id"] == "6")
        s.close()
        s = EventStream(d.port, "/rooms/hall/events", {"Last-Event-ID": "not-a-rev"})
        next(s.blocks())
        check("a Last-Event-ID that is no revision: fresh", s.next_event()["event"] == "state")
        s.close()
        s = EventStream(d.port, "/rooms/hall/events?since=6")
        next(s.blocks())
        post(d.port, "hall", {"op": "root"})
        e = s.next_event()
        check("resume at the current revision: nothing skipped, nothing repeated", e["event"] == "change" and e["id"] == "7")
        s.close()
    finally:
        d.stop()


def test_slow_reader_resynced():
    d = Daemon("--state", "none", "--max-pending", "16384")
    try:
        slow = EventStream(d.port, "/rooms/hall/events", rcvbuf=4096)
        first = d.port
        sock = connect(first)
        data = "x" * 3900
        body = b"".join(request_bytes("POST", "/rooms/hall", first, JSON,
                                      json.dumps({"op": "select", "screen": "blue", "data": data + str(i)}).encode())
                        for i in range(2000))
        sock.sendall(body)
        rest = b""
        for _ in range(2000):
            a, rest = read_answer(sock, rest)
        sock.close()
        check("2000 changes made", a.json()["rev"] == 2000)
        revisions, saw_state_after_start = [], False
        while not revisions or revisions[-1] < 2000:
            e = slow.next_event()
            if e["event"] == "state" and revisions:
                saw_state_after_start = True
            revisions.append(int(e["id"]))
        check("a fresh state event after the drop", saw_state_after_start)
        check("never backwards, never repeated", all(b > a for a, b in zip(revisions, revisions[1:])), revisions[:20])
        check("some changes were dropped for it", len(revisions) < 2001, len(revisions))
        resyncs = metric(d.port, "", "navsync_resyncs_total")
        check("counted in resyncs", resyncs is not None and resyncs >= 1, resyncs)
        slow.close()
    finally:
        d.stop()


def test_revocation_and_figures():
    tokens = os.path.join(work, "tokens-revoke")
    with open(tokens, "w") as f:
        f.write("control * admin-secret-token ops\nview * wall-secret-token wall\n")
    d = Daemon("--state", "none", "--tokens", tokens)
    try:
        s = EventStream(d.port, "/rooms/hall/events?token=wall-secret-token&name=wall-1")
        s.next_event()
        check("an events stream counts as a watcher", metric(d.port, "admin-secret-token", "navsync_watchers") == 1)
        check("and as a member", metric(d.port, "admin-secret-token", "navsync_members") == 1)
        with open(tokens, "w") as f:
            f.write("control * admin-secret-token ops\n")
        d.process.send_signal(signal.SIGHUP)
        e = s.next_event()
        check("a revoked token ends the stream with a denied event",
              e["event"] == "denied" and e["json"] == {"error": "forbidden", "message": "token revoked"}, e)
        ended = False
        try:
            s.next_event()
        except (EOFError, ConnectionResetError):
            ended = True
        check("then the daemon closes it", ended)
        check("it is no watcher any more", metric(d.port, "admin-secret-token", "navsync_watchers") == 0)
    finally:
        d.stop()


def test_tls():
    make_certificate()
    d = Daemon("--state", "none", "--tls-listen", "127.0.0.1:0", "--tls-cert", os.path.join(work, "cert.pem"),
               "--tls-key", os.path.join(work, "key.pem"), tls=True)
    try:
        s = EventStream(d.tls_port, "/rooms/hall/events", {"Origin": "https://127.0.0.1:%d" % d.tls_port}, tls=True)
        check("events on the TLS listener", s.status == 200)
        next(s.blocks())
        s.next_event()
        a = post(d.tls_port, "hall", {"op": "push", "screen": "green"}, tls=True)
        check("a change over TLS", a.status == 200)
        e = s.next_event()
        check("reaches the TLS stream", e["event"] == "change" and e["id"] == "1")
        s.close()
    finally:
        d.stop()


for test in [test_status_table, test_one_revision_everywhere_and_durability, test_resume, test_slow_reader_resynced,
             test_revocation_and_figures, test_tls]:
    print("--- " + test.__name__, flush=True)
    test()
print("http: %d checks passed" % passed)
