#!/usr/bin/env python3
"""1,000 watchers connecting with signed tokens beside static ones (docs/PERFORMANCE.md).

Usage: bench/token-connect.py BIN_DIR [WATCHERS] [ROUNDS]
(run with the PyJWT venv that Tests/interop/run.sh makes: .build/interop-venv/bin/python)

For each kind — a tokens file of distinct static tokens, HS256 and Ed25519
signed tokens (one per watcher, minted by PyJWT) — a fresh release daemon,
then WATCHERS connections that each send `AUTH <token>` and `WATCH` at once;
the time from the first connect to the last `STATE`, and the daemon's RSS
growth per connection once all are watching. Kinds are interleaved ROUNDS
times so a noisy machine hurts them alike.
"""
import base64
import os
import re
import resource
import selectors
import socket
import subprocess
import sys
import tempfile
import time

import jwt
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

BIN = sys.argv[1]
WATCHERS = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 2
WORK = tempfile.mkdtemp(prefix="navsync-token-bench-")
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def b64(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def daemon(arguments):
    log_path = os.path.join(WORK, "daemon.log")
    proc = subprocess.Popen([os.path.join(BIN, "navsyncd"), "--listen", "127.0.0.1:0", "--state", "none",
                             "--log-level", "warn"] + arguments, stderr=open(log_path, "w"), stdout=subprocess.DEVNULL)
    deadline = time.time() + 10
    while time.time() < deadline:
        match = re.search(r"listening on 127\.0\.0\.1:(\d+)", open(log_path).read())
        if match:
            return proc, int(match.group(1))
        time.sleep(0.02)
    proc.kill()
    raise SystemExit(open(log_path).read())


def connect_all(port, tokens):
    selector = selectors.DefaultSelector()
    socks = []
    started = time.perf_counter()
    for token in tokens:
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(("AUTH %s\nWATCH\n" % token).encode())
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ, [b""])
        socks.append(sock)
    watching = 0
    while watching < len(tokens):
        for key, _ in selector.select(timeout=30):
            data = key.fileobj.recv(4096)
            if not data:
                raise SystemExit("a connection closed: %r" % key.data[0])
            key.data[0] += data
            if key.data[0].count(b"\n") >= 2:
                lines = key.data[0].split(b"\n")
                if lines[0] != b"OK 0" or not lines[1].startswith(b"STATE "):
                    raise SystemExit("unexpected %r" % key.data[0])
                watching += 1
                selector.unregister(key.fileobj)
    return time.perf_counter() - started, socks


def main():
    now = int(time.time())
    claims = lambda i: {"role": "view", "rooms": "*", "name": "wall-%d" % i, "exp": now + 3600, "iat": now}
    secret = os.urandom(32)
    private = Ed25519PrivateKey.generate()
    keys = os.path.join(WORK, "keys")
    with open(keys, "w") as f:
        f.write("hs hs256 %s\ned ed25519 %s\n" % (b64(secret), b64(private.public_key().public_bytes_raw())))
    os.chmod(keys, 0o600)
    static = ["static-watcher-token-%08d" % i for i in range(WATCHERS)]
    grants = os.path.join(WORK, "grants")
    with open(grants, "w") as f:
        f.writelines("view * %s wall-%d\n" % (token, i) for i, token in enumerate(static))
    os.chmod(grants, 0o600)
    kinds = {
        "static": static,
        "HS256": [jwt.encode(claims(i), secret, algorithm="HS256", headers={"kid": "hs"}) for i in range(WATCHERS)],
        "EdDSA": [jwt.encode(claims(i), private, algorithm="EdDSA", headers={"kid": "ed"}) for i in range(WATCHERS)],
    }
    results = {kind: [] for kind in kinds}
    for _ in range(ROUNDS):
        for kind, tokens in kinds.items():
            proc, port = daemon(["--tokens", grants, "--token-keys", keys])
            try:
                before = rss_kib(proc.pid)
                seconds, socks = connect_all(port, tokens)
                time.sleep(0.3)
                after = rss_kib(proc.pid)
                results[kind].append((seconds, (after - before) * 1024 / WATCHERS))
                for sock in socks:
                    sock.close()
            finally:
                proc.terminate()
                proc.wait(5)
    print("| token | time to %d watching (s) | RSS per connection (bytes) | token length |" % WATCHERS)
    print("|---|---|---|---|")
    for kind, runs in results.items():
        print("| %s | %s | %s | %d |" % (kind, " / ".join("%.3f" % s for s, _ in runs),
                                         " / ".join("%.0f" % b for _, b in runs), len(kinds[kind][0])))


if __name__ == "__main__":
    main()
