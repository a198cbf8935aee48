"""Chromium's own EventSource on a room's event stream (HTTP-API.md):
it follows changes, and when the daemon restarts on the same port (same
state file) it reconnects by itself, sends Last-Event-ID, and carries on
with no revision skipped or repeated.

Usage: event_source_test.py BIN_DIR
Every wait is bounded; every daemon started here is stopped by its PID.
"""
import os
import signal
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from page_checks import Checks, LineClient, reserve_port, start_daemon, stop_daemon

BIN = sys.argv[1]
WORK = tempfile.mkdtemp(prefix="navsync-eventsource-")
STATE = os.path.join(WORK, "state.json")
check = Checks()
daemons = []


def start(port=0, extra=None):
    proc, bound = start_daemon(BIN, os.path.join(WORK, "daemon-%d.log" % len(daemons)),
                               ["--listen", "127.0.0.1:%d" % port] + (extra or ["--state", STATE]))
    daemons.append(proc)
    return proc, bound


def change(port, line):
    client = LineClient.connect(port)
    try:
        client.request("JOIN hall")
        return client.request(line)
    finally:
        client.close()


def seen(driver):
    return driver.execute_script("return window.seen")


def wait_until(driver, what, predicate, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        events = seen(driver)
        if predicate(events):
            return events
        time.sleep(0.05)
    raise AssertionError("timed out waiting for %s; saw %s" % (what, seen(driver)))


def cross_origin_checks(driver):
    """A page of another origin (another daemon's port) may follow a room
    only when the daemon allows that origin: the stream then echoes it."""
    _, page_port = start(extra=["--state", "none"])
    page_origin = "http://127.0.0.1:%d" % page_port
    _, allowing = start(extra=["--state", "none", "--allow-origin", page_origin])
    _, refusing = start(extra=["--state", "none"])
    driver.get(page_origin + "/healthz")
    driver.execute_script("""
        window.cross = {};
        for (const [name, port] of arguments[0]) {
            const source = new EventSource('http://127.0.0.1:' + port + '/rooms/hall/events');
            window.cross[name] = [];
            source.addEventListener('state', e => window.cross[name].push('state'));
            source.onerror = () => { if (source.readyState === EventSource.CLOSED) window.cross[name].push('closed'); };
        }
    """, [["allowing", allowing], ["refusing", refusing]])
    deadline = time.time() + 30
    cross = {}
    while time.time() < deadline:
        cross = driver.execute_script("return window.cross")
        if cross["allowing"] and cross["refusing"]:
            break
        time.sleep(0.05)
    check("a page of an --allow-origin origin reads the stream", cross.get("allowing") == ["state"])
    check("a page of any other origin is refused, for good", cross.get("refusing") == ["closed"])


def main():
    # The restart below needs the same port: held from the start, so that no
    # daemon of another suite is given it between the stop and the restart.
    held, reserved = reserve_port()
    proc, port = start(reserved)
    options = webdriver.ChromeOptions()
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        # The daemon's own page is the stream's origin.
        driver.get("http://127.0.0.1:%d/healthz" % port)
        driver.execute_script("""
            window.seen = [];
            window.opens = 0;
            const source = new EventSource('/rooms/hall/events?name=chromium');
            source.onopen = () => window.opens += 1;
            for (const name of ['state', 'change']) {
                source.addEventListener(name, e => window.seen.push(
                    [name, Number(e.lastEventId), JSON.parse(e.data).route]));
            }
            window.source = source;
        """)
        events = wait_until(driver, "the first state", lambda s: len(s) >= 1)
        check("a fresh stream starts with the state", events[0][:2] == ["state", 0])
        check("change 1 accepted", change(port, "SELECT green") == "OK 1")
        check("change 2 accepted", change(port, "PUSH blue from chromium") == "OK 2")
        events = wait_until(driver, "changes 1 and 2", lambda s: len(s) >= 3)
        check("EventSource sees both changes in order", [e[:2] for e in events[1:3]] == [["change", 1], ["change", 2]])

        proc.send_signal(signal.SIGTERM)
        proc.wait(20)
        _, again = start(port)
        check("the daemon is back on the same port", again == port)
        check("change 3 made before the browser is back", change(port, "PUSH green") == "OK 3")
        events = wait_until(driver, "the reconnect and change 3", lambda s: any(e[1] == 3 for e in s))
        check("EventSource reconnected by itself", driver.execute_script("return window.opens") >= 2)
        check("change 4 after the reconnect", change(port, "POP") == "OK 4")
        events = wait_until(driver, "change 4", lambda s: s[-1][1] == 4)
        revisions = [e[1] for e in events]
        check("no revision repeated or skipped across the restart: %s" % revisions, revisions == [0, 1, 2, 3, 4])
        check("resumed with changes, not a fresh state", [e[0] for e in events[3:]] == ["change", "change"])
        check("the last route is the room's", events[-1][2] == "/green/blue:from%20chromium")
        driver.execute_script("window.source.close()")
        cross_origin_checks(driver)
    finally:
        driver.quit()
        for daemon in daemons:
            stop_daemon(daemon)
        held.close()
    print("eventsource: %d checks passed" % check.passed)


if __name__ == "__main__":
    try:
        main()
    except BaseException:
        print("eventsource: daemon logs kept in " + WORK, file=sys.stderr)
        raise
