#!/usr/bin/env python3
"""Presence measurements (issue 21). Usage:

  bench/presence.py crowd BIN_DIR [--joins 5000] [--followers 10] [--daemons 1]
      N watchers join one room while F presence followers watch it: the time
      from the last join's answer until every follower's list is complete,
      the bytes the followers read, and the daemons' CPU during the joins.
      With --daemons 3, a fleet on a redis-server of its own (joiners and
      followers spread over the daemons).
  bench/presence.py kill BIN_DIR [--times 10]
      A member on one daemon of a 3-daemon fleet, a follower on another:
      time from kill -9 of the member's daemon to GONE at the follower.
  bench/presence.py stalled BIN_DIR [BIN_DIR...] [--followers 900] [--seconds 10]
      Issue 28's first row, for each build in one run: F connections JOIN p
      and PRESENCE and never read, one more sends AT /red, AT /green at
      full speed (its answers read and thrown away); --max-output-memory
      32 MiB. The daemon's peak RSS, its RSS once every client has gone,
      and the slowest GET of another client meanwhile.
  bench/presence.py flood BIN_DIR [BIN_DIR...] [--followers 1000] [--seconds 10] [--daemons 1]
      Presence cost under an AT flood, for each build in one run: F
      followers that read everything, one member AT-flooding at full speed,
      an honest client sending GET every 20 ms. Daemon CPU per second,
      presence lines per second reaching the followers (all together),
      the honest GET's p50/p99, and with --daemons 2 (followers on the
      second daemon) the Redis commands per second of the fleet.
  bench/presence.py followers PORT [--followers 10]
      Holds F presence followers on a daemon until interrupted, then prints
      the bytes they read (for the closed-loop bench beside them).

Every process started here is stopped by its PID; every wait is bounded.
Prints one line per figure; asserts nothing about time.
"""
import os
import re
import resource
import selectors
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
started = []


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_redis():
    port = free_port()
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started.append(proc)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    raise SystemExit("redis-server did not start")


def start_daemon(bin_dir, redis_port=None, extra=()):
    log = tempfile.NamedTemporaryFile("w+", prefix="navsyncd-", suffix=".log", delete=False)
    args = [os.path.join(bin_dir, "navsyncd"), "--listen", "127.0.0.1:0", "--max-clients", "20000"]
    args += ["--backplane", "redis://127.0.0.1:%d" % redis_port] if redis_port else ["--state", "none"]
    args += list(extra)
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=log)
    started.append(proc)
    deadline = time.time() + 10
    while time.time() < deadline:
        match = re.search(r"listening on 127\.0\.0\.1:(\d+)", open(log.name).read())
        if match:
            return proc, int(match.group(1))
        time.sleep(0.02)
    raise SystemExit("navsyncd did not start: " + open(log.name).read())


def cpu_seconds(pid):
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Conn:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.setblocking(False)
        self.buffer = b""
        self.bytes = 0

    def send(self, text):
        self.sock.setblocking(True)
        self.sock.sendall(text.encode())
        self.sock.setblocking(False)

    def take_lines(self):
        try:
            chunk = self.sock.recv(1 << 20)
        except BlockingIOError:
            return []
        if not chunk:
            raise EOFError("closed")
        self.bytes += len(chunk)
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        return [line.decode() for line in lines]

    def read_until(self, predicate, timeout=20):
        deadline = time.time() + timeout
        seen = []
        while time.time() < deadline:
            sel = selectors.DefaultSelector()
            sel.register(self.sock, selectors.EVENT_READ)
            sel.select(0.1)
            sel.close()
            for line in self.take_lines():
                seen.append(line)
                if predicate(line):
                    return seen
        raise TimeoutError("no such line within %s s; last: %s" % (timeout, seen[-3:]))


def rss_kib(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def raw_socket(port, receive_buffer=None):
    sock = socket.socket()
    if receive_buffer:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.connect(("127.0.0.1", port))
    return sock


def at_flooder(port, stop):
    """Sends AT lines at full speed from one thread and reads (discards)
    the answers on another, until `stop` is set. Returns the threads and a
    counter of lines sent."""
    import threading
    sock = raw_socket(port)
    sock.sendall(b"JOIN p\nWATCH\n")
    sent = [0]
    batch = b"AT /red\nAT /green\n" * 512

    def send_loop():
        while not stop.is_set():
            try:
                sock.sendall(batch)
            except OSError:
                return
            sent[0] += 1024

    def drain_loop():
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                if not sock.recv(1 << 20):
                    return
            except socket.timeout:
                continue
            except OSError:
                return

    threads = [threading.Thread(target=send_loop, daemon=True), threading.Thread(target=drain_loop, daemon=True)]
    for t in threads:
        t.start()
    return sock, threads, sent


def honest_gets(port, stop, every=0.02):
    """GETs from another client every `every` s until `stop`; returns the latencies list (filled as it goes)."""
    import threading
    latencies = []
    conn = socket.create_connection(("127.0.0.1", port), timeout=30)
    reader = conn.makefile("rb")

    def loop():
        while not stop.is_set():
            started_at = time.perf_counter()
            conn.sendall(b"GET\n")
            reader.readline()
            latencies.append(time.perf_counter() - started_at)
            time.sleep(every)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return conn, thread, latencies


def percentile(values, fraction):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def stalled(bin_dirs, followers, seconds):
    import threading
    print("build | followers | peak RSS MiB | RSS after all closed MiB | slowest GET ms | AT lines sent")
    for bin_dir in bin_dirs:
        proc, port = start_daemon(bin_dir, extra=["--max-output-memory", str(32 << 20)])
        socks = []
        for _ in range(followers):
            sock = raw_socket(port, receive_buffer=4096)
            sock.sendall(b"JOIN p\nPRESENCE\n")
            socks.append(sock)
        time.sleep(0.5)
        before = rss_kib(proc.pid)
        stop = threading.Event()
        flooder, threads, sent = at_flooder(port, stop)
        gets_conn, gets_thread, latencies = honest_gets(port, stop, every=0.05)
        peak = before
        deadline = time.time() + seconds
        while time.time() < deadline:
            peak = max(peak, rss_kib(proc.pid))
            time.sleep(0.05)
        stop.set()
        for t in threads + [gets_thread]:
            t.join(5)
        for sock in socks + [flooder, gets_conn]:
            sock.close()
        time.sleep(3)
        after = rss_kib(proc.pid)
        print("%s | %d | %.0f (from %.0f) | %.0f | %.1f | %d" % (bin_dir, followers, peak / 1024, before / 1024, after / 1024,
                                                              max(latencies or [float("nan")]) * 1000, sent[0]))
        proc.terminate()
        proc.wait()


def flood(bin_dirs, followers, seconds, daemons):
    import threading
    print("build | daemons | followers | daemon CPU s/s | presence lines/s at followers | GET p50 ms | GET p99 ms | Redis commands/s")
    for bin_dir in bin_dirs:
        redis_proc, redis_port = start_redis() if daemons > 1 else (None, None)
        procs = [start_daemon(bin_dir, redis_port) for _ in range(daemons)]
        member_port = procs[0][1]
        follower_port = procs[-1][1]
        socks = []
        for _ in range(followers):
            sock = raw_socket(follower_port)
            sock.sendall(b"JOIN p\nPRESENCE\n")
            sock.setblocking(False)
            socks.append(sock)
        selector = selectors.DefaultSelector()
        for sock in socks:
            selector.register(sock, selectors.EVENT_READ)
        lines = [0]
        stop = threading.Event()
        counting = threading.Event()

        def read_followers():
            while not stop.is_set():
                for key, _ in selector.select(0.1):
                    try:
                        chunk = key.fileobj.recv(1 << 16)
                    except BlockingIOError:
                        continue
                    if counting.is_set():
                        lines[0] += chunk.count(b"\n")

        reader = threading.Thread(target=read_followers, daemon=True)
        reader.start()
        time.sleep(1)
        redis_before = redis_commands(redis_port) if redis_port else 0
        cpu_before = sum(cpu_seconds(proc.pid) for proc, _ in procs)
        counting.set()
        started_at = time.time()
        flooder, threads, sent = at_flooder(member_port, stop)
        gets_conn, gets_thread, latencies = honest_gets(member_port, stop)
        time.sleep(seconds)
        elapsed = time.time() - started_at
        cpu = sum(cpu_seconds(proc.pid) for proc, _ in procs) - cpu_before
        redis_rate = (redis_commands(redis_port) - redis_before) / elapsed if redis_port else float("nan")
        counted = lines[0]
        stop.set()
        for t in threads + [gets_thread, reader]:
            t.join(5)
        for sock in socks + [flooder, gets_conn]:
            sock.close()
        print("%s | %d | %d | %.2f | %.0f | %.2f | %.2f | %.0f" % (
            bin_dir, daemons, followers, cpu / elapsed, counted / elapsed,
            percentile(latencies, 0.5) * 1000, percentile(latencies, 0.99) * 1000, redis_rate))
        for proc, _ in procs:
            proc.terminate()
            proc.wait()
        if redis_proc:
            redis_proc.terminate()
            redis_proc.wait()


def redis_commands(port):
    conn = socket.create_connection(("127.0.0.1", port), timeout=5)
    conn.sendall(b"INFO stats\r\n")
    data = b""
    while b"total_commands_processed" not in data or not data.endswith(b"\r\n"):
        data += conn.recv(1 << 16)
        if b"instantaneous_ops_per_sec" in data:
            break
    conn.close()
    return int(re.search(rb"total_commands_processed:(\d+)", data).group(1))


def crowd(bin_dir, joins, followers, daemons):
    redis = start_redis() if daemons > 1 else None
    fleet = [start_daemon(bin_dir, redis[1] if redis else None) for _ in range(daemons)]
    watchers = [Conn(fleet[i % daemons][1]) for i in range(followers)]
    for f in watchers:
        f.send("PRESENCE\n")
        f.read_until(lambda l: l == "END")
        f.bytes = 0
    counts = [0] * followers
    sel = selectors.DefaultSelector()
    for i, f in enumerate(watchers):
        sel.register(f.sock, selectors.EVENT_READ, ("follower", i))
    cpu_before = sum(cpu_seconds(p.pid) for p, _ in fleet)
    redis_before = cpu_seconds(redis[0].pid) if redis else 0.0
    started_at = time.time()
    joiners = []
    answered = 0
    last_join = None
    complete_at = [None] * followers

    def pump(timeout):
        nonlocal answered, last_join
        for key, _ in sel.select(timeout):
            kind, index = key.data
            conn = watchers[index] if kind == "follower" else joiners[index]
            for line in conn.take_lines():
                if kind == "follower" and line.startswith("MEMBER "):
                    counts[index] += 1
                    if counts[index] == joins and complete_at[index] is None:
                        complete_at[index] = time.time()
                elif kind == "joiner" and line.startswith("STATE "):
                    answered += 1
                    if answered == joins:
                        last_join = time.time()

    for n in range(joins):
        c = Conn(fleet[n % daemons][1])
        c.send("WATCH\n")
        joiners.append(c)
        sel.register(c.sock, selectors.EVENT_READ, ("joiner", n))
        if n % 200 == 199:
            pump(0)
    deadline = time.time() + 120
    while (last_join is None or None in complete_at) and time.time() < deadline:
        pump(0.05)
    cpu = sum(cpu_seconds(p.pid) for p, _ in fleet) - cpu_before
    redis_cpu = cpu_seconds(redis[0].pid) - redis_before if redis else 0.0
    if last_join is None or None in complete_at:
        print("crowd: incomplete after 120 s (answered %d, follower counts %s)" % (answered, counts))
        return
    after = max(complete_at) - last_join
    where = "one daemon" if daemons == 1 else "%d daemons on one redis" % daemons
    # Negative: the followers' lists were complete before this script read the last join's answer.
    print("crowd (%s): %d joins in %.2f s; every one of %d followers complete %+.3f s from the last join's answer"
          % (where, joins, last_join - started_at, followers, after))
    print("crowd (%s): followers read %d bytes in all (%.0f per follower, %.1f per join per follower); daemons' CPU %.2f s"
          % (where, sum(f.bytes for f in watchers), sum(f.bytes for f in watchers) / followers,
             sum(f.bytes for f in watchers) / followers / joins, cpu)
          + (" (redis %.2f s)" % redis_cpu if redis else ""))
    for c in joiners + watchers:
        c.sock.close()


def kill_to_gone(bin_dir, times):
    redis = start_redis()
    stable, stable_port = start_daemon(bin_dir, redis[1])
    follower = Conn(stable_port)
    follower.send("PRESENCE\n")
    follower.read_until(lambda l: l == "END")
    results = []
    for _ in range(times):
        victim, port = start_daemon(bin_dir, redis[1])
        member = Conn(port)
        member.send("WHOAMI\nWATCH\n")
        you = member.read_until(lambda l: l.startswith("YOU "))[-1]
        member_id = you.split(" ")[1]
        follower.read_until(lambda l: l.startswith("MEMBER %s " % member_id))
        killed = time.time()
        victim.send_signal(signal.SIGKILL)
        victim.wait(5)
        follower.read_until(lambda l: l == "GONE %s" % member_id, timeout=30)
        results.append(time.time() - killed)
        member.sock.close()
    print("kill -9 to GONE on another daemon, %d times: median %.2f s, worst %.2f s (each: %s)"
          % (times, statistics.median(results), max(results), " ".join("%.2f" % r for r in results)))


def hold_followers(port, followers):
    conns = [Conn(port) for _ in range(followers)]
    for c in conns:
        c.send("PRESENCE\n")
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    sel = selectors.DefaultSelector()
    for c in conns:
        sel.register(c.sock, selectors.EVENT_READ, c)
    while not stop:
        for key, _ in sel.select(0.2):
            key.data.take_lines()
    print("followers: %d held, %d bytes read in all" % (followers, sum(c.bytes for c in conns)), flush=True)


def option(name, default):
    if name in sys.argv:
        return int(sys.argv[sys.argv.index(name) + 1])
    return default


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    command, target = sys.argv[1], sys.argv[2]
    try:
        if command == "crowd":
            crowd(target, option("--joins", 5000), option("--followers", 10), option("--daemons", 1))
        elif command == "kill":
            kill_to_gone(target, option("--times", 10))
        elif command == "stalled":
            stalled([a for a in sys.argv[2:] if not a.startswith("--") and not a.isdigit()],
                    option("--followers", 900), option("--seconds", 10))
        elif command == "flood":
            flood([a for a in sys.argv[2:] if not a.startswith("--") and not a.isdigit()],
                  option("--followers", 1000), option("--seconds", 10), option("--daemons", 1))
        elif command == "followers":
            hold_followers(int(target), option("--followers", 10))
        else:
            raise SystemExit(__doc__)
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    main()
