"""What both browser tests use: a line-protocol client over any connected
socket, the check counter, and bounded waits on the page."""
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
