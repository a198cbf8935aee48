"""What the browser tests share: a line-protocol client over any connected
socket, the check counter, bounded waits on the page, and the per-run
certificates and the daemon start of the TLS tests."""
import base64
import hashlib
import os
import re
import subprocess
import time

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


class LineClient:
    """A line-protocol client, as nc would be, over a socket already
    connected (plain, or wrapped in TLS)."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = b""

    def line(self):
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise EOFError("daemon closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()

    def request(self, text):
        self.sock.sendall((text + "\n").encode())
        return self.line()

    def close(self):
        self.sock.close()


class Checks:
    """Counts the checks that passed; the first that fails ends the run."""

    def __init__(self):
        self.passed = 0

    def __call__(self, name, condition):
        if not condition:
            raise AssertionError(name)
        self.passed += 1
        print("ok   " + name, flush=True)


def wait_for(driver, what, predicate, timeout=10):
    try:
        WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: predicate(d))
    except Exception:
        state = driver.execute_script(
            "return [location.href, document.getElementById('title').textContent,"
            " document.getElementById('rev').textContent, document.getElementById('conn').textContent,"
            " document.body.className]")
        raise AssertionError("timed out waiting for %s; page shows %s" % (what, state))


def shows(driver, title, rev):
    return (driver.find_element(By.ID, "title").text == title
            and driver.find_element(By.ID, "rev").text == str(rev))


def make_certificates(work, ca_name):
    """Makes, in `work`, a CA (ca.pem) and a server certificate (server.pem,
    server.key) whose SAN names 127.0.0.1 and localhost, with the openssl
    command; returns the server key's SPKI hash, which Chromium is told to
    trust."""
    def openssl(*arguments):
        subprocess.run(["openssl", *arguments], cwd=work, check=True, capture_output=True, timeout=30)

    for key in ["ca.key", "server.key"]:
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key)
    openssl("req", "-x509", "-new", "-key", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=" + ca_name)
    with open(work + "/san.ext", "w") as ext:
        ext.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl("req", "-new", "-key", "server.key", "-subj", "/CN=localhost", "-out", "server.csr")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "2", "-extfile", "san.ext", "-out", "server.pem")
    public_key = subprocess.run(["openssl", "x509", "-in", "server.pem", "-pubkey", "-noout"], cwd=work,
                                check=True, capture_output=True, timeout=30).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=public_key, cwd=work,
                         check=True, capture_output=True, timeout=30).stdout
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def start_tls_daemon(bin_dir, work, extra=()):
    """Starts navsyncd on a TLS listener at a free loopback port with the
    certificates make_certificates left in `work`; returns the process and
    its port, read from the log's `web client at https://...` line (the
    daemon is ready once it has printed it). Bounded: 10 s."""
    log_path = os.path.join(work, "daemon.log")
    log = open(log_path, "w")
    proc = subprocess.Popen([os.path.join(bin_dir, "navsyncd"), "--tls-listen", "127.0.0.1:0",
                             "--tls-cert", os.path.join(work, "server.pem"),
                             "--tls-key", os.path.join(work, "server.key"), *extra],
                            stderr=log, stdout=subprocess.DEVNULL)
    deadline = time.time() + 10
    while time.time() < deadline:
        with open(log_path) as seen:
            match = re.search(r"web client at https://127\.0\.0\.1:(\d+)/", seen.read())
        if match:
            return proc, int(match.group(1))
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    proc.kill()
    with open(log_path) as seen:
        raise SystemExit("navsyncd did not start:\n" + seen.read())
