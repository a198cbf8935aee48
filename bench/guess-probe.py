#!/usr/bin/env python3
"""Issue 28's rows 6 and 8 against one or more navsyncd binaries, side by
side: what a token guesser gets through and what it does to the log, and
what half-open TLS handshakes do to an honest TLS client. Used to fill the
table in docs/HARDENING.md; the assertions live in the end-to-end tests
(GuessingThrottleTests, TLSHandshakeCapTests).

Usage: bench/guess-probe.py CERT KEY CA DAEMON [DAEMON...]
(CERT/KEY/CA: a server certificate for 127.0.0.1, its key, the CA that signed it)
"""
import os, socket, ssl, subprocess, sys, tempfile, threading, time

TOKEN = "presenter-token-probe-0001"
SECONDS = 5


class Daemon:
    def __init__(self, binary, extra):
        self.dir = tempfile.mkdtemp(prefix="navsync-guess-")
        grants = os.path.join(self.dir, "grants")
        with open(grants, "w") as f:
            f.write(f"control * {TOKEN}\n")
        os.chmod(grants, 0o600)
        self.log_path = os.path.join(self.dir, "log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen([binary, "--listen", "127.0.0.1:0", "--state", "none", "--tokens", grants] + extra,
                                     stderr=self.log, stdout=subprocess.DEVNULL)
        self.port = self.tls_port = None
        deadline = time.time() + 10
        while time.time() < deadline and (self.port is None or ("--tls-listen" in extra and self.tls_port is None)):
            for line in open(self.log_path):
                if "listening on tls://127.0.0.1:" in line:
                    self.tls_port = int(line.rsplit(":", 1)[1])
                elif "listening on 127.0.0.1:" in line:
                    self.port = int(line.rsplit(":", 1)[1])
            time.sleep(0.05)
        if self.port is None:
            raise SystemExit("daemon did not start")

    def log_size(self):
        with open(self.log_path, "rb") as f:
            data = f.read()
        return data.count(b"\n"), len(data)

    def stat(self, key):
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            s.sendall(f"AUTH {TOKEN}\nSTATS\n".encode())
            data = b""
            while b"\nEND\n" not in data:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        for line in data.decode().splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[0] == "STAT" and parts[1] == key:
                return int(parts[2])
        return None

    def stop(self):
        self.proc.terminate()
        self.proc.wait(5)


def reader(sock):
    buffer = b""
    def line():
        nonlocal buffer
        while b"\n" not in buffer:
            chunk = sock.recv(4096)
            if not chunk:
                raise EOFError
            buffer += chunk
        first, buffer = buffer.split(b"\n", 1)
        return first.decode()
    return line


def guess(daemon, source):
    """One client guessing from `source` as fast as it can, three to a
    connection. Each run takes a fresh source address: the ports a run
    leaves in TIME_WAIT would slow the next one down."""
    lines_before, bytes_before = daemon.log_size()
    answers = throttled = 0
    end = time.time() + SECONDS
    n = 0
    while time.time() < end:
        s = socket.socket()
        s.bind((source, 0))
        s.connect(("127.0.0.1", daemon.port))
        read = reader(s)
        try:
            for _ in range(3):
                n += 1
                s.sendall(f"AUTH guess-{n:016d}\n".encode())
                reply = read()
                answers += 1
                throttled += "throttled" in reply
        except (EOFError, ConnectionResetError):
            pass
        s.close()
    time.sleep(1.2)  # the log summary of the last second
    lines_after, bytes_after = daemon.log_size()
    # An honest presenter from another address.
    with socket.create_connection(("127.0.0.1", daemon.port), timeout=5) as s:
        s.sendall(f"AUTH {TOKEN}\n".encode())
        honest = reader(s)()
    failures = daemon.stat("auth_failures")
    checked = failures - (daemon.stat("auth_throttled") or 0)
    return (f"{answers / SECONDS:,.0f} AUTH answers/s, {checked:,} tokens checked, {throttled:,} throttled; "
            f"log +{lines_after - lines_before:,} lines ({(bytes_after - bytes_before) / 1024:,.0f} KiB) in {SECONDS} s; "
            f"another address: {honest}")


def handshakes(daemon, ca):
    """500 half-open handshakes from 20 addresses, then an honest TLS client from 127.0.0.1."""
    flood = []
    for i in range(500):
        s = socket.socket()
        s.bind((f"127.0.0.{10 + i % 20}", 0))
        s.connect(("127.0.0.1", daemon.tls_port))
        flood.append(s)
    time.sleep(1)
    context = ssl.create_default_context(cafile=ca)
    start = time.time()
    try:
        raw = socket.create_connection(("127.0.0.1", daemon.tls_port), timeout=15)
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            tls.sendall(b"PING honest\n")
            answer = reader(tls)()
        outcome = f"honest client answered ({answer}) after {time.time() - start:.2f} s"
    except Exception as error:
        outcome = f"honest client refused after {time.time() - start:.2f} s ({error})"
    refused = daemon.stat("tls_handshakes_refused")
    with open(f"/proc/{daemon.proc.pid}/status") as f:
        rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
    for s in flood:
        s.close()
    return f"{outcome}; tls_handshakes_refused {refused}; daemon RSS {rss / 1024:.0f} MiB with the flood held"


def main():
    if len(sys.argv) < 5:
        raise SystemExit(__doc__)
    cert, key, ca = sys.argv[1:4]
    for index, binary in enumerate(sys.argv[4:]):
        print(f"== {binary}")
        daemon = Daemon(binary, [])
        try:
            print("guessing:", guess(daemon, f"127.{os.getpid() % 200 + 1}.{index}.2"))
        finally:
            daemon.stop()
        daemon = Daemon(binary, ["--tls-listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key,
                                 "--max-clients", "500"])
        try:
            print("handshakes:", handshakes(daemon, ca))
        finally:
            daemon.stop()


if __name__ == "__main__":
    main()
