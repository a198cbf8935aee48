#!/usr/bin/env python3
"""Make docs/navsync-web.png: two headless-Chromium windows on the web client
(desktop and phone size) and the terminal client in tmux, on one room.

Run by hand from the repository after `make build` and one browser test run
(which makes .build/browser-venv); needs Pillow in that venv:

    .build/browser-venv/bin/pip install pillow
    .build/browser-venv/bin/python docs/tools/web-screenshot.py .build/release docs/navsync-web.png

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


def send(port, line):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall((line + "\n").encode())
        s.shutdown(socket.SHUT_WR)
        return s.recv(4096).decode().strip()


def browser(width, height):
    options = webdriver.ChromeOptions()
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                 "--window-size=%d,%d" % (width, height)]:
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def main():
    log_path = os.path.join(WORK, "daemon.log")
    daemon = subprocess.Popen([os.path.join(BIN, "navsyncd"), "--listen", "127.0.0.1:0", "--state", "none"],
                              stderr=open(log_path, "w"))
    tmux = ["tmux", "-L", "navsync-shot-%d" % os.getpid(), "-f", "/dev/null"]
    drivers = []
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
        subprocess.run(tmux + ["new-session", "-d", "-x", "80", "-y", "24",
                               "%s/navsync --connect 127.0.0.1:%d" % (BIN, port)], check=True)
        drivers = [browser(900, 700), browser(390, 700)]
        for driver in drivers:
            driver.get("http://127.0.0.1:%d/" % port)
            WebDriverWait(driver, 10).until(lambda d: d.find_element(By.ID, "conn").text == "live")
        # One more change after everything is watching, so all three show it live.
        send(port, "PUSH blue on the big screen")
        for driver in drivers:
            WebDriverWait(driver, 10).until(lambda d: d.find_element(By.ID, "title").text == "Blue")
        # The pages refresh their watcher count every five seconds.
        time.sleep(5.5)
        shots = []
        for i, driver in enumerate(drivers):
            path = os.path.join(WORK, "tab%d.png" % i)
            driver.save_screenshot(path)
            shots.append(Image.open(path).convert("RGB"))
        capture = os.path.join(WORK, "tui.ans")
        with open(capture, "w") as f:
            subprocess.run(tmux + ["capture-pane", "-e", "-p"], stdout=f, check=True)
        tui_png = os.path.join(WORK, "tui.png")
        subprocess.run([sys.executable, os.path.join(HERE, "capture-to-png.py"), "--columns", "80", "--rows", "24",
                        "--out", tui_png, "--top", capture], check=True)
        tui = Image.open(tui_png).convert("RGB")

        gap, label_h = 24, 40
        height = max(max(s.height for s in shots), tui.height) + label_h + gap
        width = sum(s.width for s in shots) + tui.width + gap * 4
        canvas = Image.new("RGB", (width, height), (0x20, 0x21, 0x24))
        draw = ImageDraw.Draw(canvas)
        font = ImageFont.truetype(FONT, 20)
        x = gap
        for image, label in [(shots[0], "browser tab"), (shots[1], "browser tab, phone size"),
                             (tui, "navsync (terminal client)")]:
            draw.text((x, 10), label, fill=(0xe8, 0xe8, 0xe8), font=font)
            canvas.paste(image, (x, label_h))
            x += image.width + gap
        canvas.save(OUT, optimize=True)
        print("wrote", OUT, canvas.size)
    finally:
        for driver in drivers:
            driver.quit()
        subprocess.run(tmux + ["kill-server"], stderr=subprocess.DEVNULL)
        daemon.kill()
        daemon.wait()


if __name__ == "__main__":
    main()
