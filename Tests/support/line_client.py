"""A line-protocol client for the Python suites, as nc would be."""
import socket


class LineClient:
    """A line-protocol client over a socket already connected (plain, or
    wrapped in TLS)."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = b""

    @classmethod
    def connect(cls, port, timeout=20):
        """A plain TCP connection to a daemon on this machine."""
        return cls(socket.create_connection(("127.0.0.1", port), timeout=timeout))

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
