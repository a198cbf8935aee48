#!/usr/bin/env python3
"""Stalled watchers under a full-speed writer (issue 23).

usage: bench/stalled.py NAVSYNCD [WATCHERS=10000] [CHANGES=2000] [BOUND=33554432]

Starts NAVSYNCD on a free loopback port (--state none, --max-output-memory
BOUND), connects WATCHERS watchers with 4 KiB receive buffers that never
read, then one writer sends CHANGES changes of about 1 KB, 50 in flight.
Prints the daemon's RSS growth over its baseline (peak, sampled every 200
changes and at the end), STATS output_held and events_out, and the daemon's
CPU time (utime+stime) per event handed out. Stops the daemon by its PID.
"""
import re
import socket
import subprocess
import sys
import time

daemon, watchers = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 10000
changes = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
bound = sys.argv[4] if len(sys.argv) > 4 else str(32 << 20)

proc = subprocess.Popen([daemon, "--listen", "127.0.0.1:0", "--state", "none", "--log-level", "warn",
                         "--max-output-memory", bound, "--max-clients", "20000"],
                        stderr=subprocess.PIPE, text=True)
try:
    port = None
    deadline = time.time() + 10
    while port is None and time.time() < deadline:
        found = re.search(r"listening on .*:(\d+)", proc.stderr.readline())
        if found:
            port = int(found.group(1))
    assert port, "no 'listening on' line"

    def rss_kib():
        for line in open(f"/proc/{proc.pid}/status"):
            if line.startswith("VmRSS"):
                return int(line.split()[1])

    def cpu_ticks():
        fields = open(f"/proc/{proc.pid}/stat").read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    stuck = []
    for _ in range(watchers):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", port))
        s.sendall(b"WATCH\n")
        stuck.append(s)
    writer = socket.create_connection(("127.0.0.1", port))
    replies = writer.makefile("rb")

    def stats():
        writer.sendall(b"STATS\nPING end\n")
        figures = {}
        while True:
            line = replies.readline().decode()
            if line.startswith("PONG"):
                return figures
            if line.startswith("STAT "):
                parts = line.split()
                figures[parts[1]] = parts[2] if len(parts) > 2 else ""

    time.sleep(0.5)
    base = peak = rss_kib()
    cpu_before = cpu_ticks()
    events_before = int(stats()["events_out"])
    started = time.time()
    filler = "x" * 1000
    sent = 0
    while sent < changes:
        batch = min(50, changes - sent)
        writer.sendall("".join(f"SELECT blue {filler}{sent + i}\n" for i in range(batch)).encode())
        for _ in range(batch):
            replies.readline()
        sent += batch
        if sent % 200 == 0:
            peak = max(peak, rss_kib())
    peak = max(peak, rss_kib())
    seconds = time.time() - started
    cpu = cpu_ticks() - cpu_before
    figures = stats()
    events = int(figures["events_out"]) - events_before
    tick_ns = 1e9 / 100  # USER_HZ
    print(f"watchers={watchers} changes={changes} bound_kib={int(bound) >> 10} rss_growth_kib={peak - base} "
          f"growth_over_bound={(peak - base) / (int(bound) >> 10):.3f} output_held={figures.get('output_held')} "
          f"events_out={events} cpu_ns_per_event={cpu * tick_ns / max(events, 1):.0f} writer_s={seconds:.1f}")
finally:
    proc.terminate()
    proc.wait()
