"""The web client over HTTPS and WSS in a real headless Chromium.

Usage: wss_test.py BIN_DIR

Makes a throwaway CA and a certificate for 127.0.0.1 with the openssl
command, starts a TLS-only navsyncd with it, and has Chromium trust that
certificate by the SHA-256 of its public key (--ignore-certificate-errors-spki-list,
the one certificate and nothing else). Then the page must load over
https://, connect back over wss:// by itself (a page on https:// cannot use
ws://), follow a change made by a line client speaking TLS, and send a click
that the line client sees. Every wait is bounded; the daemon is stopped by
its PID.
"""
import os
import shutil
import socket
import ssl
import sys
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from page_checks import Checks, make_certificates, LineClient, shows, start_tls_daemon, stop_daemon, wait_for

BIN = sys.argv[1]
WORK = tempfile.mkdtemp(prefix="navsync-wss-")
check = Checks()


def start_daemon():
    return start_tls_daemon(BIN, WORK, ["--state", "none"])


def TLSLines(port):
    """A line-protocol client inside TLS, checking the certificate against the test CA."""
    context = ssl.create_default_context(cafile=os.path.join(WORK, "ca.pem"))
    raw = socket.create_connection(("127.0.0.1", port), timeout=20)
    return LineClient(context.wrap_socket(raw, server_hostname="127.0.0.1"))


def main():
    spki = make_certificates(WORK, "navsync-wss-test-ca")
    proc, port = start_daemon()
    options = webdriver.ChromeOptions()
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1100,800", "--ignore-certificate-errors-spki-list=" + spki]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        lines = TLSLines(port)
        check("a TLS line client sets the scene", lines.request("SELECT green") == "OK 1")
        driver.get("https://127.0.0.1:%d/" % port)
        wait_for(driver, "the first state over wss://", lambda d: shows(d, "Green", 1))
        wait_for(driver, "live connection", lambda d: d.find_element(By.ID, "conn").text == "live")
        check("the page came over https://", driver.execute_script("return location.protocol") == "https:")
        check("the status line says the address is encrypted, as the terminal client does",
              driver.find_element(By.ID, "addr").text == "tls://127.0.0.1:%d" % port)

        check("TLS line client pushes", lines.request("PUSH blue over tls") == "OK 2")
        wait_for(driver, "the push", lambda d: shows(d, "Blue", 2))
        check("the page follows it over wss://", driver.find_element(By.ID, "data").text == "over tls")

        watcher = TLSLines(port)
        check("TLS watcher", watcher.request("WATCH") == "STATE 2 /green/blue:over%20tls")
        driver.find_element(By.ID, "pop").click()
        check("a click in the page reaches the TLS watcher", watcher.line() == "EVENT 3 pop /green")
        watcher.close()
        lines.close()
    finally:
        driver.quit()
        stop_daemon(proc)
    print("browser (wss): %d checks passed" % check.passed)


if __name__ == "__main__":
    try:
        main()
    except BaseException:
        print("browser (wss): files and daemon log kept in " + WORK, file=sys.stderr)
        raise
    shutil.rmtree(WORK, ignore_errors=True)
