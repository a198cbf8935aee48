#!/usr/bin/env python3
"""What forged presence in a fleet's Redis costs (issue 28, rows 2, 3 and 5):
for each navsyncd binary given, a redis-server of its own and two daemons
on it, then
  forged    one PUBLISH of control-character and bad-role lines: how many
            reach a presence follower with escape bytes, presence_rejected;
  20 MiB    one PUBLISH of 20 MiB of member lines: the slowest PING
            answer of each daemon in the 10 s from it, daemon 0's RSS growth and peak, its
            members_total, and its CPU use (s/s) over 5 s of quiet after;
  rooms     one client JOINs and WATCHes 2,000 rooms in turn, then leaves:
            how many names the set of rooms with members still holds.
Fills the table in docs/HARDENING.md; the assertions live in
Tests/EndToEndTests/BackplanePresenceHardeningTests.swift.

Usage: bench/fleet-presence-probe.py DAEMON [DAEMON...]
"""
import os, shutil, socket, subprocess, sys, tempfile, threading, time

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close(); return port

def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    return -1

def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

class Redis:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="navsync-fleet-probe-")
        self.port = free_port()
        self.proc = subprocess.Popen(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                                      "--dir", self.dir, "--save", "", "--appendonly", "no"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            try:
                self.command("PING"); return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("redis-server did not start")

    def command(self, *args):
        """One command in RESP over a fresh connection; the reply's first line (or bulk) as text."""
        s = socket.create_connection(("127.0.0.1", self.port), timeout=60)
        parts = [a if isinstance(a, bytes) else str(a).encode() for a in args]
        s.sendall(b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
        buf = b""
        while b"\r\n" not in buf:
            buf += s.recv(65536)
        if buf.startswith(b"$") and not buf.startswith(b"$-1"):
            size = int(buf[1:buf.index(b"\r\n")])
            while len(buf) < buf.index(b"\r\n") + 2 + size:
                buf += s.recv(65536)
            s.close()
            return buf[buf.index(b"\r\n") + 2:][:size].decode(errors="replace")
        s.close()
        return buf.split(b"\r\n")[0][1:].decode(errors="replace")

    def stop(self):
        self.proc.terminate(); self.proc.wait(); shutil.rmtree(self.dir, ignore_errors=True)

class Daemon:
    def __init__(self, binary, redis):
        self.proc = subprocess.Popen([binary, "--listen", "127.0.0.1:0", "--backplane", f"redis://127.0.0.1:{redis.port}"],
                                     stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        self.port = None
        deadline = time.time() + 15
        while time.time() < deadline and self.port is None:
            line = self.proc.stderr.readline()
            if "listening on 127.0.0.1:" in line:
                self.port = int(line.rsplit(":", 1)[1])
        if self.port is None:
            raise SystemExit("daemon did not start")
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()

    def ask(self, line, timeout=60):
        """Sends one line; returns (reply lines up to END or the first line, seconds), or (None, timeout)."""
        s = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        started = time.time()
        s.sendall(line.encode() + b"\n")
        buf = b""
        try:
            while not (buf.endswith(b"\n") and (line != "STATS" or buf.endswith(b"END\n"))):
                chunk = s.recv(1 << 16)
                if not chunk:
                    break
                buf += chunk
        except (TimeoutError, socket.timeout):
            s.close(); return None, timeout
        s.close()
        return buf.decode(errors="replace").splitlines(), time.time() - started

    def stat(self, key):
        lines, _ = self.ask("STATS")
        for l in lines or []:
            if l.startswith(f"STAT {key} "):
                return l.split()[2]
        return "-"

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill(); self.proc.wait()

def probe(binary):
    redis = Redis()
    daemons = [Daemon(binary, redis), Daemon(binary, redis)]
    row = {}
    try:
        epoch = redis.command("GET", "navsync:epoch")
        channel = "navsync:presence:db0"
        redis.command("SET", "navsync:daemon:zz", "1", "PX", "600000")
        follower = socket.create_connection(("127.0.0.1", daemons[0].port), timeout=2)
        follower.sendall(b"PRESENCE\n")
        time.sleep(0.3)
        follower.recv(1 << 16)

        forged = [f"{epoch} M main zz.1 evil\x1b]0;pwned\x07\x1b[2J control -",
                  f"{epoch} M main zz.2 bo control /red:\x1b]0;title\x07",
                  f"{epoch} M main zz.3 bo control /red:" + "x" * 200_000,
                  f"{epoch} M main zz.4 admin admin -"]
        redis.command("PUBLISH", channel, "\n".join(forged))
        time.sleep(1)
        got = b""
        follower.setblocking(False)
        try:
            while True:
                chunk = follower.recv(1 << 20)
                if not chunk:
                    break
                got += chunk
        except BlockingIOError:
            pass
        row["forged lines with ESC/BEL at a follower"] = sum(1 for l in got.split(b"\n") if b"\x1b" in l or b"\x07" in l)
        row["forged: presence_rejected"] = daemons[0].stat("presence_rejected")
        row["forged: members_total"] = daemons[0].stat("members_total")
        follower.close()

        pid = daemons[0].proc.pid
        rss_before = status_kib(pid, "VmRSS:")
        lines, size, n = [], 0, 0
        while size < 20 << 20:
            line = f"{epoch} M main zz.{n + 10} n{n} view -"
            lines.append(line); size += len(line) + 1; n += 1
        payload = "\n".join(lines).encode()
        # Each daemon is pinged over one connection, one PING at a time,
        # for 10 s from the PUBLISH on: the slowest answer is the freeze.
        worst = [0.0, 0.0]
        def pinger(i):
            s = socket.create_connection(("127.0.0.1", daemons[i].port), timeout=60)
            end = time.time() + 10
            while time.time() < end:
                sent = time.time()
                s.sendall(b"PING\n")
                buf = b""
                try:
                    while not buf.endswith(b"\n"):
                        buf += s.recv(64)
                except (TimeoutError, socket.timeout):
                    worst[i] = 60.0
                    break
                worst[i] = max(worst[i], time.time() - sent)
                time.sleep(0.01)
            s.close()
        pingers = [threading.Thread(target=pinger, args=(i,)) for i in range(2)]
        for t in pingers:
            t.start()
        redis.command("PUBLISH", channel, payload)
        for t in pingers:
            t.join()
        row["20 MiB: slowest PING in the 10 s from the PUBLISH (daemon 0, 1)"] = ", ".join(f"{w:.2f} s" for w in worst)
        time.sleep(1)
        row["20 MiB: daemon 0 RSS growth / peak"] = \
            f"+{(status_kib(pid, 'VmRSS:') - rss_before) / 1024:.1f} MiB / {status_kib(pid, 'VmHWM:') / 1024:.0f} MiB"
        row["20 MiB: members_total"] = daemons[0].stat("members_total")
        row["20 MiB: presence_rejected"] = daemons[0].stat("presence_rejected")
        start = cpu_seconds(pid)
        time.sleep(5)
        row["20 MiB: idle CPU after (s/s)"] = f"{(cpu_seconds(pid) - start) / 5:.3f}"

        walker = socket.create_connection(("127.0.0.1", daemons[1].port), timeout=30)
        wanted = 0
        batch = b""
        for i in range(2000):
            batch += f"JOIN r{i}\nWATCH\n".encode()
            wanted += 2
        walker.sendall(batch)
        buf = b""
        while buf.count(b"\n") < wanted:
            buf += walker.recv(1 << 20)
        walker.close()
        time.sleep(2)
        row["rooms: set of rooms with members after 2,000 rooms and a close"] = redis.command("SCARD", "navsync:presence-rooms")
    finally:
        for d in daemons:
            d.stop()
        redis.stop()
    return row

def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    rows = [probe(b) for b in sys.argv[1:]]
    print("| probe | " + " | ".join(sys.argv[1:]) + " |")
    print("|---|" + "---|" * len(rows))
    for key in rows[0]:
        print(f"| {key} | " + " | ".join(str(r[key]) for r in rows) + " |")

if __name__ == "__main__":
    main()
