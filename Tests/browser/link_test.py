"""`navsync link` in a real headless Chromium (PROTOCOL.md *The web client's modes*).

Usage: link_test.py BIN_DIR

Makes an Ed25519 key with `navsync keygen`, starts navsyncd with its public
line in --token-keys, and opens the link `navsync link` prints: the page must
go live as the token's member (the name the link gave, a view grant), take
the token out of the address bar, say until when the link is valid, and
follow a change. Then a link whose token has run out (its exp 40 s ago,
signed with the same key by the test) must say plainly that it expired, with
the time, and ask for a new one instead of retrying. Every wait is bounded;
the daemon is stopped by its PID.
"""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from page_checks import Checks, LineClient, shows, start_daemon, stop_daemon, wait_for

BIN = sys.argv[1]
WORK = tempfile.mkdtemp(prefix="navsync-link-")
check = Checks()


def navsync(*arguments):
    return subprocess.run([os.path.join(BIN, "navsync")] + list(arguments), capture_output=True, text=True, timeout=20)


def main():
    signing = os.path.join(WORK, "signing")
    keygen = navsync("keygen", "--kid", "hall", signing)
    check("navsync keygen", keygen.returncode == 0)
    keys = os.path.join(WORK, "keys")
    with open(keys, "w") as f:
        f.write(keygen.stdout)
    os.chmod(keys, 0o600)
    # A presenter's key beside it, to steer the room while the wall watches.
    hs = navsync("keygen", "--kid", "desk", "--alg", "hs256", os.path.join(WORK, "desk"))
    with open(keys, "a") as f:
        f.write(hs.stdout)
    proc, port = start_daemon(BIN, os.path.join(WORK, "daemon.log"),
                              ["--listen", "127.0.0.1:0", "--token-keys", keys, "--anonymous", "view", "--state", "none"])
    base = "http://127.0.0.1:%d/" % port
    options = webdriver.ChromeOptions()
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1100,800"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        link = navsync("link", "--signing-key", signing, "--url", base, "--room", "hall", "--name", "wall-9", "--ttl", "2h",
                       "--no-qr")
        check("navsync link prints one line", link.returncode == 0 and link.stdout.count("\n") == 1)
        url = link.stdout.strip()
        check("the link carries the room, the name and the token",
              url.startswith(base + "?room=hall&name=wall-9#token=ey"))
        driver.get(url)
        wait_for(driver, "live connection", lambda d: d.find_element(By.ID, "conn").text == "live")
        check("the token is gone from the address bar", "token" not in driver.current_url)
        check("the address bar keeps the room", driver.current_url == base + "?room=hall&name=wall-9")
        check("the token is kept for the tab, not for the browser",
              driver.execute_script("return localStorage.length === 0 && !!sessionStorage.getItem('navsync-token')"))
        wait_for(driver, "the member chip of the token's name", lambda d: "wall-9" in d.find_element(By.ID, "members").text)
        wait_for(driver, "the validity", lambda d: d.find_element(By.ID, "expiry").text.startswith("link valid until "))
        check("a view grant", "viewer" in driver.find_element(By.TAG_NAME, "body").get_attribute("class"))

        desk = navsync("token", "--signing-key", os.path.join(WORK, "desk"), "--role", "control", "--rooms", "hall")
        lines = LineClient.connect(port)
        check("a presenter with a signed token", lines.request("AUTH " + desk.stdout.strip()) == "OK 0")
        lines.request("JOIN hall")
        check("the presenter steers", lines.request("SELECT green") == "OK 1")
        wait_for(driver, "the wall follows", lambda d: shows(d, "Green", 1))
        lines.close()

        # A link whose token ran out, signed with the same key (its exp 40 s ago).
        with open(signing) as f:
            kid, _, seed = [line for line in f if not line.startswith("#")][0].split()
        expired = mint_ed25519(kid, seed, {"role": "view", "rooms": ["hall"], "exp": int(time.time()) - 40})
        driver.execute_script("sessionStorage.clear()")
        driver.get(base + "?room=hall#token=" + expired)
        wait_for(driver, "the expired notice", lambda d: d.find_element(By.ID, "notice-title").is_displayed())
        text = driver.find_element(By.ID, "notice-text").text
        check("an expired link says so plainly, with its time",
              re.match(r"^This link expired at \d\d?:\d\d.* \u2014 ask for a new one\.$", text) is not None)
        check("no token dialog over it", not driver.find_element(By.ID, "auth").is_displayed())
        check("the expired token is gone from the address bar", "token" not in driver.current_url)
    finally:
        driver.quit()
        stop_daemon(proc)
    print("browser (link): %d checks passed" % check.passed)


def mint_ed25519(kid, seed_b64, claims):
    """An EdDSA JWT signed with the openssl command (no Python crypto package needed here)."""
    seed = base64.urlsafe_b64decode(seed_b64 + "=" * (-len(seed_b64) % 4))
    # PKCS#8 for an Ed25519 seed: a fixed 16-byte prefix, then the 32 bytes.
    der = bytes.fromhex("302e020100300506032b657004220420") + seed
    key = os.path.join(WORK, "expired-key.der")
    with open(key, "wb") as f:
        f.write(der)
    b64 = lambda raw: base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    signing_input = b64(json.dumps({"alg": "EdDSA", "kid": kid}).encode()) + "." + b64(json.dumps(claims).encode())
    message = os.path.join(WORK, "message")
    with open(message, "w") as f:
        f.write(signing_input)
    signature = subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", key, "-keyform", "DER", "-rawin", "-in", message],
                               capture_output=True, check=True).stdout
    return signing_input + "." + b64(signature)


if __name__ == "__main__":
    try:
        main()
    except BaseException:
        print("browser (link): files and daemon log kept in " + WORK, file=sys.stderr)
        raise
    shutil.rmtree(WORK, ignore_errors=True)
