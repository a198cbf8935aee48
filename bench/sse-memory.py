#!/usr/bin/env python3
"""Idle memory per watcher: server-sent events beside the line protocol (docs/PERFORMANCE.md).

Usage: bench/sse-memory.py BIN_DIR [WATCHERS] [ROUNDS]   (default 2000 watchers, 2 rounds)

For each kind, a fresh release navsyncd (`--state none`, port 0, ready by its
`listening on` line, stopped by its PID), its RSS read, then WATCHERS
connections in room `main`: `WATCH` over TCP (ready at its `STATE` line) or
`GET /rooms/main/events` (ready at its `event: state` block). Once every
one is watching and the daemon has been quiet for a moment, the RSS again:
the growth divided by WATCHERS is the idle cost of one watcher. Kinds are
interleaved ROUNDS times so a loaded machine hurts them alike.
"""
import os
import re
import resource
import selectors
import socket
import subprocess
import sys
import tempfile
import time

BIN = sys.argv[1]
WATCHERS = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 2
WORK = tempfile.mkdtemp(prefix="navsync-sse-memory-")
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

KINDS = {
    # kind: (what is sent, what marks the watcher as watching)
    "TCP (WATCH)": (b"WATCH\n", b"STATE "),
    "SSE (GET /rooms/main/events)": (b"GET /rooms/main/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", b"event: state\n"),
}


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def daemon():
    log_path = os.path.join(WORK, "daemon.log")
    proc = subprocess.Popen([os.path.join(BIN, "navsyncd"), "--listen", "127.0.0.1:0", "--state", "none",
                             "--max-clients", str(WATCHERS + 100), "--log-level", "warn"],
                            stderr=open(log_path, "w"), stdout=subprocess.DEVNULL)
    deadline = time.time() + 10
    while time.time() < deadline:
        match = re.search(r"listening on 127\.0\.0\.1:(\d+)", open(log_path).read())
        if match:
            return proc, int(match.group(1))
        time.sleep(0.02)
    proc.kill()
    proc.wait(5)
    raise SystemExit(open(log_path).read())


def watch_all(port, request, marker):
    """Opens WATCHERS watchers, 200 at a time; returns their sockets once every one is watching."""
    selector = selectors.DefaultSelector()
    socks = []
    watching = 0
    while watching < WATCHERS:
        while len(socks) < WATCHERS and len(socks) - watching < 200:
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(request)
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ, [b""])
            socks.append(sock)
        ready = selector.select(timeout=30)
        if not ready:
            raise SystemExit("no watcher answered for 30 s (%d watching)" % watching)
        for key, _ in ready:
            data = key.fileobj.recv(65536)
            if not data:
                raise SystemExit("a watcher was closed: %r" % key.data[0])
            key.data[0] += data
            if marker in key.data[0]:
                watching += 1
                selector.unregister(key.fileobj)
    return socks


def main():
    results = {kind: [] for kind in KINDS}
    for _ in range(ROUNDS):
        for kind, (request, marker) in KINDS.items():
            proc, port = daemon()
            try:
                time.sleep(0.2)
                before = rss_kib(proc.pid)
                socks = watch_all(port, request, marker)
                time.sleep(0.5)
                after = rss_kib(proc.pid)
                results[kind].append((before, after))
                for sock in socks:
                    sock.close()
            finally:
                proc.terminate()
                proc.wait(5)
    print("| watchers (%d, idle, one room) | RSS before → after (KiB), each run | bytes per watcher, each run |" % WATCHERS)
    print("|---|---|---|")
    for kind, runs in results.items():
        print("| %s | %s | %s |" % (kind, " / ".join("%d → %d" % run for run in runs),
                                    " / ".join("%.0f" % ((a - b) * 1024 / WATCHERS) for b, a in runs)))


if __name__ == "__main__":
    main()
