#!/usr/bin/env python3
"""Make docs/navsync-presence.png: three terminal clients (tmux) and the web
client (headless Chromium) in one room; one terminal client is detached and
browses on its own, another has the members panel open.

Run by hand from the repository after `make build` and one browser test run
(which makes .build/browser-venv); needs Pillow in that venv:

    .build/browser-venv/bin/pip install pillow
    .build/browser-venv/bin/python docs/tools/presence-screenshot.py .build/release docs/navsync-presence.png

Every process it starts is stopped by its PID or its tmux socket.
"""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

from PIL import Image, ImageDraw, ImageFont
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

BIN, OUT = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
WORK = tempfile.mkdtemp(prefix="navsync-shot-")
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
NAMES = ["ada", "bo", "cy"]


def send(port, line):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall((line + "\n").encode())
        s.shutdown(socket.SHUT_WR)
        return s.recv(4096).decode().strip()


def wait_until(what, predicate, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise SystemExit("timed out waiting for " + what)


def main():
    log_path = os.path.join(WORK, "daemon.log")
    daemon = subprocess.Popen([os.path.join(BIN, "navsyncd"), "--listen", "127.0.0.1:0", "--state", "none"],
                              stderr=open(log_path, "w"))
    tmux = ["tmux", "-L", "navsync-shot-%d" % os.getpid(), "-f", "/dev/null"]
    driver = None
    try:
        port = None
        for _ in range(500):
            match = re.search(r"listening on 127\.0\.0\.1:(\d+)", open(log_path).read())
            if match:
                port = int(match.group(1))
                break
            time.sleep(0.01)
        send(port, "SELECT red")
        send(port, "PUSH green")
        for name in NAMES:
            command = "env LANG=C.UTF-8 TERM=screen %s/navsync --connect 127.0.0.1:%d --name %s" % (BIN, port, name)
            subprocess.run(tmux + ["new-session", "-d", "-s", name, "-x", "80", "-y", "24", command], check=True)

        def pane(name):
            return subprocess.run(tmux + ["capture-pane", "-p", "-t", name], capture_output=True, text=True).stdout

        options = webdriver.ChromeOptions()
        for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1000,820"]:
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        driver.get("http://127.0.0.1:%d/?name=wren" % port)
        WebDriverWait(driver, 10).until(lambda d: d.find_element(By.ID, "conn").text == "live")
        wait_until("four members", lambda: all("4 members" in pane(n) for n in NAMES))
        send(port, "PUSH blue on the big screen")
        WebDriverWait(driver, 10).until(lambda d: d.find_element(By.ID, "title").text == "Blue")
        # cy detaches and looks at red on its own; ada opens the members panel.
        subprocess.run(tmux + ["send-keys", "-t", "cy", "d"], check=True)
        wait_until("cy detached", lambda: "detached" in pane("cy"))
        subprocess.run(tmux + ["send-keys", "-t", "cy", "1"], check=True)
        wait_until("cy on red", lambda: "Red" in pane("cy"))
        subprocess.run(tmux + ["send-keys", "-t", "ada", "w"], check=True)
        wait_until("ada's panel", lambda: "at /red" in pane("ada"))
        WebDriverWait(driver, 10).until(lambda d: "at /red" in d.find_element(By.ID, "members").text)
        time.sleep(5.5)  # the page's member count comes with its STATS every five seconds
        web = os.path.join(WORK, "web.png")
        driver.save_screenshot(web)
        captures = []
        for name in NAMES:
            path = os.path.join(WORK, name + ".ans")
            with open(path, "w") as f:
                subprocess.run(tmux + ["capture-pane", "-e", "-p", "-t", name], stdout=f, check=True)
            captures.append(path)
        terminals = os.path.join(WORK, "terminals.png")
        subprocess.run([sys.executable, os.path.join(HERE, "capture-to-png.py"), "--columns", "80", "--rows", "24",
                        "--out", terminals, "--top"] + captures, check=True)
        top = Image.open(terminals).convert("RGB")
        page = Image.open(web).convert("RGB")
        gap, label_h = 24, 40
        width = max(top.width, page.width) + 2 * gap
        height = label_h + top.height + gap + label_h + page.height + gap
        canvas = Image.new("RGB", (width, height), (0x20, 0x21, 0x24))
        draw = ImageDraw.Draw(canvas)
        font = ImageFont.truetype(FONT, 20)
        draw.text((gap, 10), "navsync --name ada (members panel: w)   ·   bo (following)   ·   cy (detached: d, browsing red alone)",
                  fill=(0xe8, 0xe8, 0xe8), font=font)
        canvas.paste(top, (gap, label_h))
        y = label_h + top.height + gap
        draw.text((gap, y + 10), "the web client in Chromium (?name=wren), following the room", fill=(0xe8, 0xe8, 0xe8), font=font)
        canvas.paste(page, (gap, y + label_h))
        canvas.save(OUT, optimize=True)
        print("wrote", OUT, canvas.size)
    finally:
        if driver:
            driver.quit()
        subprocess.run(tmux + ["kill-server"], stderr=subprocess.DEVNULL)
        daemon.kill()
        daemon.wait()


if __name__ == "__main__":
    main()
