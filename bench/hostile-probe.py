#!/usr/bin/env python3
"""Measures what hostile peers cost a navsyncd: RSS growth of the daemon
(from /proc/PID/status) for each attack of docs/HARDENING.md, and whether
another client is still answered at once. Used to fill the table in
docs/HARDENING.md; the assertions live in the end-to-end tests.

Usage: bench/hostile-probe.py DAEMON [DAEMON...]   (each row for each binary, side by side)
"""
import os, socket, subprocess, sys, tempfile, time, base64

def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    return -1

def rss_kib(pid):
    return status_kib(pid, "VmRSS:")

class Daemon:
    def __init__(self, binary, token):
        self.dir = tempfile.mkdtemp(prefix="navsync-probe-")
        self.token_path = os.path.join(self.dir, "token")
        with open(self.token_path, "w") as f:
            f.write(token + "\n")
        os.chmod(self.token_path, 0o600)
        self.proc = subprocess.Popen([binary, "--listen", "127.0.0.1:0", "--state", "none",
                                      "--token-file", self.token_path],
                                     stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        deadline = time.time() + 10
        self.port = None
        while time.time() < deadline:
            line = self.proc.stderr.readline()
            if "listening on 127.0.0.1:" in line:
                self.port = int(line.rsplit(":", 1)[1])
                break
        if self.port is None:
            raise SystemExit("daemon did not start")
        # Drain the log so the daemon never blocks on a full pipe.
        import threading
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

def connect(port, rcvbuf=None):
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", port))
    return s

def ask(port, lines, token):
    """A second client: AUTH, then the lines; returns the replies and the time taken."""
    s = connect(port)
    s.settimeout(10)
    started = time.time()
    s.sendall(f"AUTH {token}\n".encode() + "".join(l + "\n" for l in lines).encode())
    buf = b""
    try:
        while buf.count(b"\n") < len(lines) + 1:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            buf += chunk
    except TimeoutError:
        pass
    s.close()
    return buf.decode(errors="replace").splitlines()[1:], time.time() - started

def send_some(sock, data, seconds):
    """Sends as much of data as the daemon takes within `seconds`."""
    sock.setblocking(False)
    sent = 0
    deadline = time.time() + seconds
    view = memoryview(data)
    while sent < len(data) and time.time() < deadline:
        try:
            sent += sock.send(view[sent:sent + (1 << 16)])
        except BlockingIOError:
            time.sleep(0.01)
    sock.setblocking(True)
    return sent

def big_room(port, token):
    """Fills room main to ~770 KB of route within default limits (64 entries of 4000 bytes, each %XX)."""
    s = connect(port)
    data = "!" * 4000
    lines = [f"AUTH {token}"] + [f"PUSH blue {data}" for _ in range(63)]
    s.sendall(("\n".join(lines) + "\nGET\n").encode())
    s.settimeout(10)
    buf = b""
    while buf.count(b"\n") < len(lines) + 1:
        buf += s.recv(1 << 20)
    s.close()
    return len(buf.splitlines()[-1])

def ws_open(port, rcvbuf=4096):
    s = connect(port, rcvbuf)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall((f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
    assert b" 101 " in head, head
    return s

def ws_frame(opcode, payload):
    mask = b"\x01\x02\x03\x04"
    n = len(payload)
    if n < 126:
        head = bytes([0x80 | opcode, 0x80 | n])
    elif n < 65536:
        head = bytes([0x80 | opcode, 0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head = bytes([0x80 | opcode, 0x80 | 127]) + n.to_bytes(8, "big")
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))

def run_attack(binary, name, attack):
    token = "probe-token-" + os.urandom(4).hex()
    d = Daemon(binary, token)
    try:
        route_bytes = big_room(d.port, token) if "GET" in name else 0
        time.sleep(0.2)
        before = rss_kib(d.proc.pid)
        held = attack(d.port, token)
        time.sleep(1.0)
        during = rss_kib(d.proc.pid)
        replies, took = ask(d.port, ["PING probe"], token)
        for s in held:
            s.close()
        time.sleep(1.0)
        after = rss_kib(d.proc.pid)
        peak = status_kib(d.proc.pid, "VmHWM:")
        return dict(before=before, during=during, after=after, peak=peak, other=replies[:1], took=took, route=route_bytes)
    finally:
        d.stop()

def h1(port, token):
    s = connect(port)
    send_some(s, b"A" * (32 << 20), 5)
    return [s]

def h2(port, token):
    s = ws_open(port)
    frame = ws_frame(0x9, b"x" * 125)
    send_some(s, frame * ((64 << 20) // len(frame)), 5)
    return [s]

def h3_tcp(port, token):
    s = connect(port, 4096)
    s.sendall(f"AUTH {token}\n".encode())
    send_some(s, b"GET\n" * 2048, 5)
    return [s]

def h3_ws(port, token):
    s = ws_open(port)
    s.sendall(ws_frame(0x1, f"AUTH {token}".encode()))
    message = b"\n".join([b"GET"] * 1000)
    send_some(s, ws_frame(0x1, message) * 8, 5)
    return [s]

def mix_ws(port, token):
    s = ws_open(port)
    s.sendall(ws_frame(0x1, f"AUTH {token}".encode()))
    chunk = ws_frame(0x9, b"p" * 125) + ws_frame(0x1, b"\n".join([b"GET"] * 100))
    send_some(s, chunk * 200, 5)
    return [s]

ATTACKS = [
    ("H1 32 MB of 'A', no newline", h1),
    ("H2 64 MB of WebSocket pings, never read", h2),
    ("H3 2,048 GETs of a 770 KB room over TCP, never read", h3_tcp),
    ("H3 8 WebSocket messages of 1,000 GETs, never read", h3_ws),
    ("mix: pings and GETs of a 770 KB room in WebSocket messages, never read", mix_ws),
]

if __name__ == "__main__":
    binaries = sys.argv[1:]
    print("| attack | " + " | ".join(f"{os.path.basename(os.path.dirname(b)) or b}: RSS growth open / after close, peak RSS" for b in binaries) + " |")
    print("|---|" + "---|" * len(binaries))
    for name, attack in ATTACKS:
        cells = []
        for b in binaries:
            r = run_attack(b, name, attack)
            cells.append(f"+{(r['during'] - r['before']) / 1024:.1f} MiB / +{(r['after'] - r['before']) / 1024:.1f} MiB, peak {r['peak'] / 1024:.0f} MiB"
                         f" (other client: {r['other'][0] if r['other'] else 'no answer'} in {r['took'] * 1000:.0f} ms)")
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
