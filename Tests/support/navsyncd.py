"""Starting and stopping a built navsyncd for the Python end-to-end suites
(browser, HTTP API, interop), so each starts it the one way the project's
tests do: on port 0, ready once its log says `listening on`, its log in a
file (a chatty daemon never blocks on a full pipe), every wait bounded and
every process stopped by its PID."""
import os
import re
import signal
import socket
import subprocess
import time

# The first listener's port: plain (`listening on 127.0.0.1:PORT`) or TLS
# (`listening on tls://127.0.0.1:PORT`).
LISTENING = r"listening on (?:tls://)?127\.0\.0\.1:(\d+)"


def start_daemon(bin_dir, log_path, arguments, ready=LISTENING, timeout=20):
    """Runs `navsyncd ARGUMENTS` with its log in `log_path` and waits until
    the log shows it is ready. `ready` is a pattern whose first group is the
    port, or a function of the log's text that returns what it finds or
    None. Returns the process and the port (or the function's finding). A
    daemon that exits or is not ready within `timeout` seconds is stopped
    and the run fails with its log."""
    with open(log_path, "w") as log:
        proc = subprocess.Popen([os.path.join(bin_dir, "navsyncd"), *arguments],
                                stdout=subprocess.DEVNULL, stderr=log)
    if isinstance(ready, str):
        pattern = ready

        def ready(text):
            match = re.search(pattern, text)
            return int(match.group(1)) if match else None

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(log_path) as log:
            found = ready(log.read())
        if found is not None:
            return proc, found
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    stop_daemon(proc)
    with open(log_path) as log:
        raise AssertionError("navsyncd did not start: %s\n%s" % (" ".join(arguments), log.read()))


def reserve_port():
    """A loopback port held for a test that must start a daemon on the same
    port twice: a socket bound to it with SO_REUSEADDR that never listens.
    While it is open the kernel gives the port to no one binding port 0 (a
    daemon of another suite) and connects to it are refused, yet navsyncd
    (libuv sets SO_REUSEADDR too) can listen on it. Returns the socket (keep
    it until the end) and the port."""
    held = socket.socket()
    held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    held.bind(("127.0.0.1", 0))
    return held, held.getsockname()[1]


def stop_daemon(proc, timeout=5):
    """Stops a daemon by its PID: SIGTERM, a bounded wait, then SIGKILL.
    Nothing to do if it has already ended."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout)
