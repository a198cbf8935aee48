"""A team's day on one daemon: the 1.3 features together, as people use them.

Usage: scenario_test.py BIN_DIR [ARTIFACT_DIR]

One navsyncd, TLS only (a CA and a certificate made here with openssl),
a tokens file with per-room grants and `--anonymous view`. In the room
`team-a`:

- ada, the presenter, in the terminal client (tmux, tls://, a token for
  team-a and team-b), and on the page, which opens as a viewer and signs in
  with the same token (no reload);
- two wall screens in display mode, each opened with a `#token=` link;
- a phone that watches without a token;
- bo, an attendee with a view token in the terminal client, who detaches
  and browses on their own.

Then a reload of the presenter's page and of a wall, a token revoked by a
SIGHUP reload (that wall says so, the other carries on), a link to a room
outside a token's grant, and the daemon going away (the walls keep the
screen and show only a small badge). At every step it checks what each
person SEES: status lines, member counts, view only, no error text that is
not theirs, and in display mode no chrome at all. Screenshots (pages from
Chromium; terminal panes rendered from `tmux capture-pane -e` when Pillow
is there) go to ARTIFACT_DIR. Every wait is bounded; every process started
here is stopped by its PID or its tmux socket.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from page_checks import Checks, make_certificates, start_tls_daemon, stop_daemon, wait_for

BIN = os.path.abspath(sys.argv[1])
ARTIFACTS = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else None
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
WORK = tempfile.mkdtemp(prefix="navsync-scenario-")
TMUX = ["tmux", "-L", "navsync-scenario-%d" % os.getpid(), "-f", "/dev/null"]
check = Checks()

PRESENTER = "ada-presenter-token-000000001"
WALL_1 = "wall-one-token-00000000000001"
WALL_2 = "wall-two-token-00000000000002"
ATTENDEE = "bo-attendee-token-0000000001"
GRANTS = [
    "control team-a,team-b %s ada" % PRESENTER,
    "view team-a %s wall-1" % WALL_1,
    "view team-a %s wall-2" % WALL_2,
    "view team-a %s bo" % ATTENDEE,
]


def write(name, text, mode=0o600):
    path = os.path.join(WORK, name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path


def start_daemon(grants):
    return start_tls_daemon(BIN, WORK, ["--tokens", grants, "--anonymous", "view", "--state", "none"])


# ---- the terminal clients ---------------------------------------------------

def terminal(name, port, token_file):
    command = ("env -u NO_COLOR TERM=screen LANG=C.UTF-8 %s --connect tls://127.0.0.1:%d --tls-ca %s --room team-a "
               "--token-file %s; echo '[navsync exited]'; sleep 3600") % (
        os.path.join(BIN, "navsync"), port, os.path.join(WORK, "ca.pem"), token_file)
    subprocess.run(TMUX + ["new-session", "-d", "-s", name, "-x", "80", "-y", "24", command], check=True, timeout=10)


def pane(name, escapes=False):
    return subprocess.run(TMUX + ["capture-pane", "-p"] + (["-e"] if escapes else []) + ["-t", name],
                          capture_output=True, text=True, timeout=10).stdout


def lines_of(name):
    return [line.rstrip() for line in pane(name).split("\n")]


def status_line(name):
    return next((l.strip() for l in reversed(lines_of(name)) if l.strip()), "")


def key_line(name):
    lines = [l for l in lines_of(name) if l.strip()]
    return lines[-2].strip() if len(lines) > 1 else ""


def keys(name, *sequence):
    subprocess.run(TMUX + ["send-keys", "-t", name] + list(sequence), check=True, timeout=10)


def wait_pane(name, what, predicate, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate(pane(name)):
            return
        time.sleep(0.1)
    raise AssertionError("timed out waiting for %s in %s's terminal; it shows:\n%s" % (what, name, pane(name)))


def terminal_shot(names, out):
    """The panes as one PNG (docs/tools/capture-to-png.py, with Pillow), else their escape captures."""
    if not ARTIFACTS:
        return
    captures = []
    for name in names:
        path = os.path.join(ARTIFACTS, "%s.ans" % name)
        with open(path, "w") as f:
            f.write(pane(name, escapes=True))
        captures.append(path)
    try:
        import PIL  # noqa: F401
    except ImportError:
        print("     (no Pillow: terminal captures kept as .ans)")
        return
    subprocess.run([sys.executable, os.path.join(ROOT, "docs/tools/capture-to-png.py"), "--columns", "80",
                    "--rows", "24", "--out", os.path.join(ARTIFACTS, out), "--top"] + captures, check=True, timeout=60)


# ---- the pages ----------------------------------------------------------------

def text(driver, element_id):
    return driver.find_element(By.ID, element_id).text


def shown(driver, element_id):
    return driver.find_element(By.ID, element_id).is_displayed()


def visible_text(driver):
    return driver.execute_script("return document.body.innerText")


def member_count(driver):
    return len(driver.find_elements(By.CSS_SELECTOR, "#members .member"))


def no_error_text(driver, who):
    page = visible_text(driver)
    check("%s sees no error text" % who, "ERR" not in page and "forbidden" not in page and "refused" not in page)


def display_checks(driver, who, title):
    """A wall: only the screen, no chrome, no badge while live."""
    wait_for(driver, "%s showing %s" % (who, title),
             lambda d: text(d, "title") == title and "display" in d.find_element(By.TAG_NAME, "body").get_attribute("class"))
    check("%s: the token is gone from the address bar" % who, "token" not in driver.current_url)
    check("%s: no buttons, status line, members or breadcrumb" % who,
          not shown(driver, "crumbs") and not any(b.is_displayed() for b in driver.find_elements(By.TAG_NAME, "button"))
          and not shown(driver, "status") and not shown(driver, "members"))
    check("%s: no badge while live" % who, not shown(driver, "badge"))
    check("%s: no name prompt or token dialog" % who, not shown(driver, "name-form") and not shown(driver, "auth"))
    no_error_text(driver, who)


def shot(driver, name):
    if ARTIFACTS:
        driver.save_screenshot(os.path.join(ARTIFACTS, name))


def open_tab(driver, url, window="tab", size=None):
    driver.switch_to.new_window(window)
    if size:
        driver.set_window_size(*size)
    driver.get(url)
    return driver.current_window_handle


def main():
    spki = make_certificates(WORK, "team day CA")
    grants = write("grants", "\n".join(GRANTS) + "\n")
    presenter_token = write("presenter-token", PRESENTER + "\n")
    attendee_token = write("attendee-token", ATTENDEE + "\n")
    daemon, port = start_daemon(grants)
    base = "https://127.0.0.1:%d/" % port
    options = webdriver.ChromeOptions()
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,720", "--hide-scrollbars", "--ignore-certificate-errors-spki-list=" + spki]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        # 09:00 ada starts the terminal client with her token for team-a and team-b.
        terminal("ada", port, presenter_token)
        wait_pane("ada", "a connected presenter", lambda p: any("room team-a" in l and l.rstrip().endswith("connected")
                                                                 for l in p.split("\n")))
        status = status_line("ada")
        check("ada's terminal: room, revision, members and the light on one status line (%s)" % status,
              "room team-a" in status and "rev 0" in status and "1 member" in status and status.endswith("connected"))
        check("ada's terminal: not view only, no error", "view only" not in status and "ERR" not in pane("ada"))
        keys("ada", "2")
        wait_pane("ada", "Green at rev 1", lambda p: "rev 1" in p and "Green" in p)

        # The walls open their links: only the screen, the token out of the address bar.
        wall_1 = open_tab(driver, base + "?room=team-a&display#token=" + WALL_1)
        display_checks(driver, "wall 1", "Green")
        wall_2 = open_tab(driver, base + "?room=team-a&display&name=wall-two#token=" + WALL_2)
        display_checks(driver, "wall 2", "Green")
        # The page's own 3 s timer, which a loaded machine runs late: waited
        # for (bounded), not slept past.
        wait_for(driver, "wall 2: the pointer hidden after 3 s without movement",
                 lambda d: "idle" in d.find_element(By.TAG_NAME, "body").get_attribute("class"))
        check("wall 2: the pointer is hidden after 3 s without movement",
              "idle" in driver.find_element(By.TAG_NAME, "body").get_attribute("class"))

        # A phone in the audience, no token: it follows, view only, and could sign in.
        phone = open_tab(driver, base + "?room=team-a&name=phone", window="window", size=(390, 844))
        wait_for(driver, "the phone live", lambda d: text(d, "conn") == "live" and text(d, "title") == "Green")
        check("phone: view only, and Sign in offered", shown(driver, "viewer") and shown(driver, "sign-in"))
        check("phone: no control that would change the room",
              not any(shown(driver, i) for i in ["menu", "pop", "root", "next", "input"]))

        # ada's laptop: the page opens as a viewer, she signs in without reloading.
        presenter = open_tab(driver, base + "?room=team-a", window="window", size=(1280, 800))
        wait_for(driver, "the presenter page live", lambda d: text(d, "conn") == "live" and text(d, "title") == "Green")
        driver.execute_script("window.navsyncMarker = 'not reloaded'")
        check("presenter page before signing in: view only, Sign in visible",
              shown(driver, "viewer") and shown(driver, "sign-in"))
        driver.find_element(By.ID, "sign-in").click()
        wait_for(driver, "the token dialog", lambda d: shown(d, "auth"))
        check("the dialog asks to sign in", text(driver, "auth-title") == "Sign in with your token")
        driver.find_element(By.ID, "auth-token").send_keys(PRESENTER)
        driver.find_element(By.CSS_SELECTOR, "#auth-form button[type=submit]").click()
        wait_for(driver, "the page turned controller", lambda d: shown(d, "menu") and not shown(d, "viewer"))
        check("signed in without a reload", driver.execute_script("return window.navsyncMarker") == "not reloaded")
        check("Sign in is gone, and no 'Stay anon' for a named token",
              not shown(driver, "sign-in") and not shown(driver, "name-form"))

        # bo, an attendee, follows in the terminal with a view token for team-a.
        terminal("bo", port, attendee_token)
        wait_pane("bo", "a connected attendee", lambda p: "(view only)" in p and "connected" in p)
        time.sleep(4.5)  # two heartbeats: a refused STATS would be on the status line by now
        # The member count comes from presence lines on their own schedule: waited for.
        wait_pane("bo", "six members on bo's status line", lambda p: "6 members" in p)
        status = status_line("bo")
        check("bo's terminal: room team-a (view only), members, connected, no STATS refusal (%s)" % status,
              "room team-a (view only)" in status and "6 members" in status and status.endswith("connected")
              and "ERR" not in pane("bo"))
        check("bo's key line: no push or pop, keeps ? keys and q quit (%s)" % key_line("bo"),
              "push" not in key_line("bo") and "pop" not in key_line("bo")
              and "? keys" in key_line("bo") and "q quit" in key_line("bo"))

        # Six here, everywhere, counted from presence.
        wait_for(driver, "six members on the presenter's page",
                 lambda d: member_count(d) == 6 and text(d, "watchers") == "6")
        wait_pane("ada", "six members in ada's terminal", lambda p: "6 members" in p)
        driver.switch_to.window(phone)
        wait_for(driver, "six on the phone", lambda d: text(d, "watchers") == "6")
        no_error_text(driver, "phone")

        # ada pushes Blue with a note from her laptop; everyone sees it, decoded.
        driver.switch_to.window(presenter)
        driver.find_element(By.ID, "mode-push").click()
        driver.find_element(By.ID, "input").send_keys("Quarterly numbers")
        driver.find_element(By.CSS_SELECTOR, "#menu button[data-screen='blue']").click()
        wait_for(driver, "Blue on ada's page", lambda d: text(d, "title") == "Blue" and text(d, "rev") == "2")
        check("the breadcrumb is decoded", "Blue: Quarterly numbers" in text(driver, "crumbs"))
        no_error_text(driver, "ada's page")
        wait_pane("ada", "Blue in ada's terminal", lambda p: "rev 2" in p and "Quarterly numbers" in p)
        for handle, who in [(wall_1, "wall 1"), (wall_2, "wall 2"), (phone, "phone")]:
            driver.switch_to.window(handle)
            wait_for(driver, "Blue on " + who, lambda d: text(d, "title") == "Blue" and text(d, "data") == "Quarterly numbers")
        check("walls and phone show Blue with the note, decoded", True)

        # bo detaches and browses Red alone; the room moves on and bo's line says where, decoded, at its revision.
        keys("bo", "d")
        wait_pane("bo", "bo detached", lambda p: "detached (room at" in p)
        keys("bo", "1")
        wait_pane("bo", "Red on bo's screen", lambda p: "Red" in p and "detached" in p)
        status = status_line("bo")
        check("bo's detached line: the room's route in words, at the room's revision (%s)" % status,
              "detached (room at green › blue: Quarterly numbers)" in status and "rev 2" in status
              and "%20" not in pane("bo"))
        driver.switch_to.window(presenter)
        wait_for(driver, "bo at Red in ada's member list",
                 lambda d: any("bo" in m.text and "at Red" in m.text for m in d.find_elements(By.CSS_SELECTOR, "#members .member")))
        check("ada's page names where bo looks, decoded", "%" not in text(driver, "members"))
        shot(driver, "scenario-presenter.png")
        terminal_shot(["ada", "bo"], "scenario-terminals.png")
        driver.switch_to.window(wall_1)
        shot(driver, "scenario-wall.png")
        driver.switch_to.window(presenter)
        driver.find_element(By.ID, "mode-select").click()
        driver.find_element(By.ID, "input").clear()
        driver.find_element(By.CSS_SELECTOR, "#menu button[data-screen='green']").click()
        wait_for(driver, "Green at rev 3", lambda d: text(d, "rev") == "3")
        wait_pane("bo", "the room's revision on bo's detached line",
                  lambda p: "rev 3" in p and "detached (room at green)" in p)
        check("bo's detached line follows the room's revision (%s)" % status_line("bo"), "Red" in pane("bo"))
        keys("bo", "f")
        wait_pane("bo", "bo following again", lambda p: "detached" not in p and "Green" in p)

        # A reload: the presenter stays signed in; the wall keeps its token (not in the address).
        driver.refresh()
        wait_for(driver, "ada's page after reload", lambda d: text(d, "conn") == "live" and shown(d, "menu"))
        check("after a reload ada is still a controller, with no Sign in", not shown(driver, "sign-in"))
        driver.switch_to.window(wall_1)
        driver.refresh()
        display_checks(driver, "wall 1 after a reload", "Green")

        # A revoked token: wall 2's line leaves the file, SIGHUP.
        write("grants", "\n".join(g for g in GRANTS if WALL_2 not in g) + "\n")
        daemon.send_signal(signal.SIGHUP)
        driver.switch_to.window(wall_2)
        wait_for(driver, "wall 2 says its token was refused", lambda d: text(d, "notice-title") == "This screen's token was refused")
        check("wall 2: a full-page message, no prompt, no chrome",
              not shown(driver, "auth") and not shown(driver, "status") and not shown(driver, "title"))
        check("wall 2: no reconnecting badge under a final notice", not shown(driver, "badge"))
        shot(driver, "scenario-wall-revoked.png")
        driver.switch_to.window(wall_1)
        display_checks(driver, "wall 1 after wall 2's token was revoked", "Green")
        driver.switch_to.window(presenter)
        wait_for(driver, "five members after the revocation", lambda d: text(d, "watchers") == "5")
        no_error_text(driver, "ada's page after the revocation")
        wait_pane("ada", "five members in ada's terminal", lambda p: "5 members" in p)

        # A link to a room outside its token's grant: the page names the room and the rooms allowed.
        open_tab(driver, base + "?room=team-b#token=" + WALL_1)
        wait_for(driver, "the outside-grant page", lambda d: "team-b" in text(d, "notice-title"))
        links = [a.text for a in driver.find_elements(By.CSS_SELECTOR, "#notice-rooms a")]
        check("it names team-b and links the room allowed (%s)" % links, links == ["team-a"])
        shot(driver, "scenario-outside-grant.png")
        driver.find_element(By.CSS_SELECTOR, "#notice-rooms a").click()
        wait_for(driver, "the allowed room from the link", lambda d: text(d, "room") == "team-a" and text(d, "conn") == "live")

        # The daemon goes away: walls keep the last screen and show only the badge.
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(20)
        driver.switch_to.window(wall_1)
        wait_for(driver, "the reconnecting badge", lambda d: shown(d, "badge"))
        check("wall 1 keeps showing Green under a small badge", text(driver, "title") == "Green"
              and text(driver, "badge") == "reconnecting" and not shown(driver, "status"))
        shot(driver, "scenario-wall-reconnecting.png")
    finally:
        driver.quit()
        subprocess.run(TMUX + ["kill-server"], stderr=subprocess.DEVNULL, timeout=10)
        stop_daemon(daemon)
        shutil.rmtree(WORK, ignore_errors=True)
    print("scenario: %d checks passed" % check.passed)


if __name__ == "__main__":
    main()
