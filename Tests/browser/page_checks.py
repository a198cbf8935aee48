"""What the browser tests share: bounded waits on the page, the per-run
certificates and the daemon start of the TLS tests, and (from
Tests/support, shared with the other Python suites) the daemon's start and
stop, the line-protocol client and the check counter."""
import base64
import hashlib
import os
import subprocess
import sys

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import Checks  # noqa: E402,F401 (re-exported for the browser tests)
from line_client import LineClient  # noqa: E402,F401
from navsyncd import reserve_port, start_daemon, stop_daemon  # noqa: E402,F401


def wait_for(driver, what, predicate, timeout=20):
    # A predicate that reads elements can meet one the page has just
    # re-rendered (the members list is rebuilt on every presence line):
    # that is "not yet", and the next poll finds the new element.
    try:
        WebDriverWait(driver, timeout, poll_frequency=0.05,
                      ignored_exceptions=(StaleElementReferenceException,)).until(lambda d: predicate(d))
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
    its port. Bounded: 20 s."""
    return start_daemon(bin_dir, os.path.join(work, "daemon.log"),
                        ["--tls-listen", "127.0.0.1:0", "--tls-cert", os.path.join(work, "server.pem"),
                         "--tls-key", os.path.join(work, "server.key"), *extra])
