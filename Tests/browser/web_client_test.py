"""The web client in a real headless Chromium, driven over WebDriver.

Usage: web_client_test.py BIN_DIR [SCREENSHOT_DIR]

Starts navsyncd (port 0, a state file of its own), opens the page, and
checks what a person would: the page follows netcat's changes, a click in
the page reaches a netcat watcher, two tabs stay in sync, a sheet shows as a
modal, and after `kill -9` and a restart on the same port the page recovers
by itself; a `?room=` that is not a room name is refused on the page
and changes nothing; (1.2) with grants, the token dialog says when a token
was refused, and a view token shows no control and gets `forbidden` for a
change forced from the console. Every wait is bounded; every process started here is stopped by
its PID. Prints one line per check and the page's open-to-first-paint time.
"""
import os
import shutil
import signal
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from page_checks import Checks, LineClient, reserve_port, shows, start_daemon, stop_daemon, wait_for

BIN = sys.argv[1]
SHOTS = sys.argv[2] if len(sys.argv) > 2 else None
WORK = tempfile.mkdtemp(prefix="navsync-browser-")
STATE = os.path.join(WORK, "state.json")
daemons = []
check = Checks()


def start(port=0, extra=()):
    proc, bound = start_daemon(BIN, os.path.join(WORK, "daemon-%d.log" % len(daemons)),
                               ["--listen", "127.0.0.1:%d" % port, "--state", STATE, *extra])
    daemons.append(proc)
    return proc, bound


def Netcat(port):
    """A line-protocol client on a plain TCP connection."""
    return LineClient.connect(port)


PRESENTER = "presenter-token-0000000001"
SCREEN = "screen-token-000000000001"


def viewer_checks(driver):
    """(1.2) A daemon with grants: the token dialog, then the page as a viewer."""
    grants = os.path.join(WORK, "grants")
    with open(grants, "w") as f:
        f.write("control * %s\nview * %s\n" % (PRESENTER, SCREEN))
    os.chmod(grants, 0o600)
    _, port = start(extra=["--state", "none", "--tokens", grants])
    presenter = Netcat(port)
    check("presenter authenticates", presenter.request("AUTH " + PRESENTER) == "OK 0")
    check("presenter sets the scene", presenter.request("SELECT green") == "OK 1")
    driver.execute_script("sessionStorage.clear()")
    driver.get("http://127.0.0.1:%d/" % port)
    wait_for(driver, "the token dialog", lambda d: d.find_element(By.ID, "auth").is_displayed())
    box = driver.find_element(By.ID, "auth-token")
    check("the password box is one line tall (%d px)" % box.size["height"], box.size["height"] < 60)
    box.send_keys("wrong-token-000000000001")
    driver.find_element(By.CSS_SELECTOR, "#auth-form button").click()
    wait_for(driver, "the refusal in the dialog",
             lambda d: d.find_element(By.ID, "auth").is_displayed()
             and d.find_element(By.ID, "auth-note").text == "That token was refused.")
    time.sleep(0.5)  # the auth-required replies queued behind the AUTH have arrived by now
    check("the refusal stays, not overwritten by the replies behind it",
          driver.find_element(By.ID, "auth-note").text == "That token was refused.")
    box = driver.find_element(By.ID, "auth-token")
    box.send_keys(SCREEN)
    driver.find_element(By.CSS_SELECTOR, "#auth-form button").click()
    wait_for(driver, "the viewer live", lambda d: d.find_element(By.ID, "conn").text == "live" and shows(d, "Green", 1))
    check("the page says it is view only", driver.find_element(By.ID, "viewer").is_displayed())
    check("no control is offered", not any(driver.find_element(By.ID, i).is_displayed()
                                           for i in ["menu", "pop", "root", "next", "dismiss", "mode-push", "input"]))
    for key in "rn1bmp":
        driver.find_element(By.TAG_NAME, "body").send_keys(key)
    check("keys change nothing", presenter.request("GET") == "STATE 1 /green")
    driver.execute_script("window.navsync.send('SELECT blue')")
    wait_for(driver, "the forbidden toast", lambda d: "forbidden" in d.find_element(By.ID, "toast").text)
    check("a change forced from the console is refused", presenter.request("GET") == "STATE 1 /green")
    check("the viewer still follows", presenter.request("PUSH blue") == "OK 2")
    wait_for(driver, "the presenter's push", lambda d: shows(d, "Blue", 2))
    if SHOTS:
        driver.save_screenshot(os.path.join(SHOTS, "web-viewer.png"))
    presenter.close()


def main():
    # The kill -9 and restart below need the same port: held from the start,
    # so that no daemon of another suite is given it while this one is away.
    held, reserved = reserve_port()
    proc, port = start(reserved)
    url = "http://127.0.0.1:%d/" % port
    options = webdriver.ChromeOptions()
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1100,800", "--hide-scrollbars"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        netcat = Netcat(port)
        check("netcat sets the scene", netcat.request("SELECT green") == "OK 1")

        opened = time.time()
        driver.get(url)
        wait_for(driver, "the first state", lambda d: shows(d, "Green", 1))
        painted_ms = (time.time() - opened) * 1000
        first_paint = driver.execute_script("return window.navsync.firstPaintMs")
        check("page shows the room's screen in its colour", "c-green" in driver.find_element(By.TAG_NAME, "body").get_attribute("class"))
        wait_for(driver, "the catalog's message (MESSAGES)", lambda d: d.find_element(By.ID, "message").text != "")
        wait_for(driver, "live connection", lambda d: d.find_element(By.ID, "conn").text == "live")
        check("the status line shows the plain address", driver.find_element(By.ID, "addr").text == "127.0.0.1:%d" % port)
        print("page: open to first paint of the state %.0f ms (navigation start to paint %s ms)" % (painted_ms, first_paint))

        # netcat changes the room; the page follows.
        check("netcat push", netcat.request("PUSH blue hello web") == "OK 2")
        wait_for(driver, "the push", lambda d: shows(d, "Blue", 2))
        check("page shows data and breadcrumb",
              driver.find_element(By.ID, "data").text == "hello web"
              and "Green" in driver.find_element(By.ID, "crumbs").text)

        # A click in the page reaches a netcat watcher.
        watcher = Netcat(port)
        check("watcher", watcher.request("WATCH") == "STATE 2 /green/blue:hello%20web")
        driver.find_element(By.ID, "pop").click()
        check("click Pop reaches the watcher", watcher.line() == "EVENT 3 pop /green")
        driver.find_element(By.ID, "mode-push").click()
        driver.find_element(By.ID, "input").send_keys("from the page")
        driver.find_element(By.CSS_SELECTOR, "#menu button[data-screen='blue']").click()
        check("click Push Blue with data reaches the watcher",
              watcher.line() == "EVENT 4 push /green/blue:from%20the%20page")
        wait_for(driver, "own change", lambda d: shows(d, "Blue", 4))

        # Two tabs stay in sync.
        first = driver.current_window_handle
        driver.switch_to.new_window("tab")
        driver.get(url)
        wait_for(driver, "second tab", lambda d: shows(d, "Blue", 4))
        driver.find_element(By.TAG_NAME, "body").send_keys("r")  # the terminal client's key for root
        check("key r in tab 2 reaches the watcher", watcher.line() == "EVENT 5 root /green")
        driver.switch_to.window(first)
        wait_for(driver, "tab 1 follows tab 2", lambda d: shows(d, "Green", 5))
        check("two tabs in sync", True)

        # A sheet shows as a modal (protocol 1.1's PRESENT).
        reply = netcat.request("PRESENT blue a note")
        check("netcat presents a sheet", reply.startswith("OK "))
        rev = int(reply.split()[1])
        wait_for(driver, "the sheet", lambda d: d.find_element(By.ID, "backdrop").is_displayed())
        check("sheet is a modal in its colour over the screen",
              driver.find_element(By.ID, "sheet-title").text == "Blue"
              and driver.find_element(By.ID, "sheet-data").text == "a note"
              and "c-blue" in driver.find_element(By.ID, "sheet").get_attribute("class")
              and driver.find_element(By.ID, "title").text == "Green")
        check("watcher sees the present", watcher.line().startswith("EVENT %d present " % rev))
        # The sheet covers the screen, not the footer: a screen button under it is still the one clicked.
        button = driver.find_element(By.ID, "root")
        on_top = driver.execute_script(
            "const r = arguments[0].getBoundingClientRect();"
            " return document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) === arguments[0]"
            " || arguments[0].contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2));", button)
        check("with a sheet up, the footer's buttons are not covered", on_top)
        # Esc closes the key help first; only the next Esc dismisses the sheet.
        body = driver.find_element(By.TAG_NAME, "body")
        body.send_keys("?")
        wait_for(driver, "the key help", lambda d: d.find_element(By.ID, "help").is_displayed())
        body.send_keys("\ue00c")  # Escape
        wait_for(driver, "the key help closed", lambda d: not d.find_element(By.ID, "help").is_displayed())
        check("Esc closed the help and left the sheet", driver.find_element(By.ID, "backdrop").is_displayed()
              and netcat.request("GET").startswith("STATE %d " % rev))
        driver.find_element(By.ID, "sheet-dismiss").click()
        wait_for(driver, "dismissed", lambda d: not d.find_element(By.ID, "backdrop").is_displayed()
                 and d.find_element(By.ID, "rev").text == str(rev + 1))
        check("Dismiss in the page reaches the watcher", watcher.line() == "EVENT %d dismiss /green" % (rev + 1))
        current = int(netcat.request("GET").split()[1])

        if SHOTS:
            driver.save_screenshot(os.path.join(SHOTS, "web-desktop.png"))

        # kill -9 and a restart on the same port: the page recovers by itself.
        netcat.close()
        watcher.close()
        proc.send_signal(signal.SIGKILL)
        proc.wait(20)
        wait_for(driver, "the page to notice", lambda d: d.find_element(By.ID, "conn").text != "live")
        check("while the daemon is away the watcher count is not shown as live",
              driver.find_element(By.ID, "watchers").text == "\u2013")
        check("nor the members", driver.find_elements(By.CSS_SELECTOR, "#members .member") == [])
        proc, _ = start(port)
        wait_for(driver, "reconnect", lambda d: d.find_element(By.ID, "conn").text == "live", timeout=30)
        check("page reconnected by itself at the same revision", driver.find_element(By.ID, "rev").text == str(current))
        netcat = Netcat(port)
        check("netcat after restart", netcat.request("SELECT red") == "OK %d" % (current + 1))
        wait_for(driver, "change after restart", lambda d: shows(d, "Red", current + 1))
        driver.switch_to.window(driver.window_handles[1])
        wait_for(driver, "tab 2 after restart", lambda d: shows(d, "Red", current + 1))
        check("both tabs recovered", True)

        # ?room= opens another room.
        driver.get(url + "?room=kitchen")
        wait_for(driver, "room kitchen", lambda d: d.find_element(By.ID, "room").text == "kitchen" and shows(d, "Red", 0))
        check("?room=kitchen", netcat.request("JOIN kitchen").startswith("STATE 0"))
        check("netcat in kitchen", netcat.request("SELECT blue") == "OK 1")
        wait_for(driver, "kitchen change", lambda d: shows(d, "Blue", 1))
        if SHOTS:
            driver.set_window_size(390, 844)
            driver.save_screenshot(os.path.join(SHOTS, "web-phone.png"))

        # (1.2) Presence: the page names itself once per tab, lists the room's
        # members, detaches (its changes move only itself, the daemon hears
        # AT) and is not moved by the room until it follows again.
        driver.get(url + "?room=lounge")
        wait_for(driver, "room lounge", lambda d: shows(d, "Red", 0) and d.find_element(By.ID, "conn").text == "live")
        check("the page asks for a name", driver.find_element(By.ID, "name-form").is_displayed())
        driver.find_element(By.ID, "name-input").send_keys("wren")
        driver.find_element(By.CSS_SELECTOR, "#name-form button[type=submit]").click()
        member = Netcat(port)
        check("a netcat member in the lounge", member.request("JOIN lounge").startswith("STATE 0")
              and member.request("NAME nc") == "OK 0" and member.request("WATCH") == "STATE 0 /red")
        members = lambda d: [e.text for e in d.find_elements(By.CSS_SELECTOR, "#members .member")]
        wait_for(driver, "both members listed", lambda d: members(d) == ["wren (you) \u00b7 control \u00b7 following",
                                                                         "nc \u00b7 control \u00b7 following"])
        check("the members list names both, this page marked", True)
        driver.refresh()
        wait_for(driver, "the lounge again", lambda d: d.find_element(By.ID, "conn").text == "live"
                 and any(m.startswith("wren (you)") for m in members(d)))
        check("the name is remembered in the tab: not asked again", not driver.find_element(By.ID, "name-form").is_displayed())
        asker = Netcat(port)
        asker.request("JOIN lounge")

        def who():
            asker.sock.sendall(b"WHO\n")
            lines = []
            while not lines or lines[-1] != "END":
                lines.append(asker.line())
            return [" ".join(l.split(" ")[2:]) for l in lines[:-1]]

        driver.find_element(By.ID, "follow").click()
        wait_for(driver, "detached", lambda d: "detached" in d.find_element(By.ID, "detached").text
                 and d.find_element(By.ID, "follow").get_attribute("aria-pressed") == "false")
        wait_for(driver, "the daemon hears where it looks", lambda d: who() == ["nc control -", "wren control /red"])
        check("Follow off: detached, AT sent", True)
        driver.find_element(By.CSS_SELECTOR, "#menu button[data-screen='blue']").click()
        wait_for(driver, "blue on its own", lambda d: d.find_element(By.ID, "title").text == "Blue")
        check("a detached change moves only the page", asker.request("GET") == "STATE 0 /red")
        wait_for(driver, "AT /blue", lambda d: who() == ["nc control -", "wren control /blue"])
        check("netcat changes the room", member.request("SELECT green") == "OK 1")
        wait_for(driver, "the status line shows where the room is",
                 lambda d: d.find_element(By.ID, "detached").text == "detached \u00b7 the room is at Green")
        check("a detached page is not moved by the room", driver.find_element(By.ID, "title").text == "Blue"
              and any(m == "wren (you) \u00b7 control \u00b7 at Blue" for m in members(driver)))
        driver.find_element(By.ID, "follow").click()
        wait_for(driver, "following again", lambda d: shows(d, "Green", 1) and d.find_element(By.ID, "detached").text == "")
        wait_for(driver, "AT -", lambda d: who() == ["nc control -", "wren control -"])
        check("Follow on: the room's screen again", True)
        if SHOTS:
            driver.save_screenshot(os.path.join(SHOTS, "web-presence.png"))
        member.close()
        asker.close()

        # ?room= with a name that is not a room name: the page says so and
        # changes nothing, in main or anywhere else.
        main_state = netcat.request("JOIN main")
        driver.get(url + "?room=bad%20room")
        wait_for(driver, "the refusal", lambda d: d.find_element(By.ID, "title").text == "Not a room name")
        message = driver.find_element(By.ID, "message").text
        check("?room=bad%20room says it is not a room name",
              "\u201Cbad room\u201D is not a room name" in message and "A\u2013Z a\u2013z 0\u20139 _ . -" in message)
        check("and shows no room's state", driver.execute_script("return window.navsync.view.stack") is None
              and driver.find_element(By.ID, "conn").text == "not connected")
        check("its buttons are disabled", not driver.find_element(By.ID, "root").is_enabled()
              and not driver.find_element(By.ID, "mode-push").is_enabled())
        for key in "rn1b":
            driver.find_element(By.TAG_NAME, "body").send_keys(key)
        check("main is unchanged after keys on the refused page", netcat.request("GET") == main_state)
        netcat.close()
        viewer_checks(driver)
    finally:
        driver.quit()
        for daemon in daemons:
            stop_daemon(daemon)
        held.close()
    print("browser: %d checks passed" % check.passed)


if __name__ == "__main__":
    # The daemons' logs explain a failure, so a failed run keeps them; a
    # passing one leaves nothing behind in the temporary directory.
    try:
        main()
    except BaseException:
        print("browser: daemon logs kept in " + WORK, file=sys.stderr)
        raise
    shutil.rmtree(WORK, ignore_errors=True)
