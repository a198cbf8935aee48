import ChildProcessHarness
import Foundation

/// An outside TLS client: Python's `ssl` module, which checks the daemon's
/// certificate against `name` and the CA file as any client would. Each run
/// prints `PEER <common name> <version>` first (or `FAILED <reason>` and
/// exits 2), then what the mode says.
enum TLSPeer {
    /// `lines`: sends each argument as a line, prints one reply line per line.
    /// `http`: sends stdin, prints everything until the daemon closes.
    /// `head`: sends stdin, prints the response head (through its blank line).
    /// `flood LINE SECONDS FLAG`: sends LINE over and over for SECONDS without
    ///   reading (prints `SENT <lines>`), waits (bounded) for the file FLAG,
    ///   then reads every reply and prints `READ <lines> <last line>`.
    /// `idle COUNT FLAG`: opens COUNT more connections, each a watcher
    ///   (`WATCH`, its `STATE` read), prints `READY`, holds them all until the
    ///   file FLAG appears (bounded).
    /// `burst COUNT BATCH FLAG`: as `idle`, but the COUNT handshakes run
    ///   BATCH at a time on non-blocking sockets, as a room of screens
    ///   reconnecting does (the bench connects this way too).
    /// `fanout COUNT BURST ROUNDS`: opens COUNT more connections, each a
    ///   watcher; this connection is the actor: it sends BURST `OPEN`s in one
    ///   write, then ROUNDS more one at a time, each once every watcher has
    ///   the one before (a closed loop). Prints `FANOUT <watchers> <lines
    ///   each>` when every watcher read exactly the actor's events in order,
    ///   else `MISMATCH <watcher> <line expected> <line read>`.
    /// `reload FLAG`: connection A answers GET, prints READY, waits (bounded)
    ///   for the file FLAG, then opens connection B (PEER-B <common name>)
    ///   and has both answer a PING.
    static let script = #"""
    import os, socket, ssl, sys, time

    def connect(port, ca, name):
        context = ssl.create_default_context(cafile=ca)
        raw = socket.create_connection(("127.0.0.1", port), timeout=30)
        return context.wrap_socket(raw, server_hostname=name)

    def common_name(tls):
        for part in tls.getpeercert()["subject"]:
            for key, value in part:
                if key == "commonName":
                    return value
        return "?"

    class Reader:
        def __init__(self, tls):
            self.tls, self.buffer = tls, b""
        def fill(self):
            data = self.tls.recv(65536)
            if not data:
                raise EOFError("closed")
            self.buffer += data
        def line(self):
            while b"\n" not in self.buffer:
                self.fill()
            line, self.buffer = self.buffer.split(b"\n", 1)
            return line.decode()
        def head(self):
            while b"\r\n\r\n" not in self.buffer:
                self.fill()
            head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
            return head.decode()
        def rest(self):
            while True:
                try:
                    self.fill()
                except (EOFError, ssl.SSLError, ConnectionResetError):
                    return self.buffer.decode(errors="replace")

    mode, port, ca, name = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    try:
        tls = connect(port, ca, name)
    except (ssl.SSLError, ssl.CertificateError, OSError) as error:
        print("FAILED", error, flush=True)
        sys.exit(2)
    print("PEER", common_name(tls), tls.version(), flush=True)
    reader = Reader(tls)
    if mode == "lines":
        tls.sendall("".join(line + "\n" for line in sys.argv[5:]).encode())
        for _ in sys.argv[5:]:
            print(reader.line(), flush=True)
    elif mode == "http":
        tls.sendall(sys.stdin.buffer.read())
        sys.stdout.write(reader.rest())
    elif mode == "head":
        tls.sendall(sys.stdin.buffer.read())
        print(reader.head(), flush=True)
    elif mode == "flood":
        import select
        line = (sys.argv[5] + "\n").encode()
        # Whole lines, one record a write: a write the socket could not take
        # stays inside OpenSSL, and is finished by repeating the same buffer.
        unit = line * (16000 // len(line))
        tls.setblocking(False)
        units, unfinished = 0, False
        until = time.time() + float(sys.argv[6])
        while time.time() < until:
            try:
                tls.send(unit)
                units, unfinished = units + 1, False
            except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
                unfinished = True
                select.select([], [tls], [], 0.05)
        expected = (units + (1 if unfinished else 0)) * (len(unit) // len(line))
        print("SENT", expected, flush=True)
        deadline = time.time() + 60
        while not os.path.exists(sys.argv[7]) and time.time() < deadline:
            time.sleep(0.02)
        # One thread drives the socket: finishing the cut write and reading the replies.
        count, tail = 0, b""
        deadline = time.time() + 60
        while count < expected and time.time() < deadline:
            if unfinished:
                try:
                    tls.send(unit)
                    unfinished = False
                except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
                    pass
            try:
                data = tls.recv(65536)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                select.select([tls], [tls] if unfinished else [], [], 0.05)
                continue
            if not data:
                break
            count += data.count(b"\n")
            tail = (tail + data)[-200:]
        print("READ", count, tail.rstrip(b"\n").split(b"\n")[-1].decode(), flush=True)
    elif mode == "idle":
        watchers = [tls] + [connect(port, ca, name) for _ in range(int(sys.argv[5]) - 1)]
        for watcher in watchers:
            watcher.sendall(b"WATCH\n")
            Reader(watcher).line()
        print("READY", flush=True)
        deadline = time.time() + 60
        while not os.path.exists(sys.argv[6]) and time.time() < deadline:
            time.sleep(0.02)
    elif mode == "burst":
        import selectors
        count, batch, flag = int(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
        context = ssl.create_default_context(cafile=ca)
        selector = selectors.DefaultSelector()
        watchers, started, in_flight = [], 0, 0
        deadline = time.time() + 60
        while len(watchers) < count and time.time() < deadline:
            while started < count and in_flight < batch:
                raw = socket.create_connection(("127.0.0.1", port), timeout=30)
                raw.setblocking(False)
                peer = context.wrap_socket(raw, server_hostname=name, do_handshake_on_connect=False)
                selector.register(peer, selectors.EVENT_READ | selectors.EVENT_WRITE, ["handshake", b""])
                started, in_flight = started + 1, in_flight + 1
            for key, _ in selector.select(timeout=1):
                peer, state = key.fileobj, key.data
                try:
                    if state[0] == "handshake":
                        peer.do_handshake()
                        peer.sendall(b"WATCH\n")
                        state[0] = "state"
                        selector.modify(peer, selectors.EVENT_READ, state)
                        continue
                    state[1] += peer.recv(4096)
                    if b"\n" in state[1]:
                        selector.unregister(peer)
                        watchers.append(peer)
                        in_flight -= 1
                except ssl.SSLWantReadError:
                    selector.modify(peer, selectors.EVENT_READ, state)
                except ssl.SSLWantWriteError:
                    selector.modify(peer, selectors.EVENT_WRITE, state)
        print("READY", len(watchers), flush=True)
        deadline = time.time() + 60
        while not os.path.exists(flag) and time.time() < deadline:
            time.sleep(0.02)
    elif mode == "fanout":
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        count, burst, rounds = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
        watchers = [Reader(connect(port, ca, name)) for _ in range(count)]
        for watcher in watchers:
            watcher.tls.sendall(b"WATCH\n")
            watcher.line()
        expected, revision = [], 0
        def change_all(number):
            global revision
            lines = []
            for _ in range(number):
                revision += 1
                lines.append("OPEN /red/blue:r%d" % revision)
                expected.append("EVENT %d open /red/blue:r%d" % (revision, revision))
            tls.sendall("".join(line + "\n" for line in lines).encode())
            for _ in range(number):
                reader.line()
        def check(start):
            for index, watcher in enumerate(watchers):
                for line in expected[start:]:
                    got = watcher.line()
                    if got != line:
                        print("MISMATCH", index, repr(line), repr(got), flush=True)
                        sys.exit(1)
        change_all(burst)
        check(0)
        for _ in range(rounds):
            start = len(expected)
            change_all(1)
            check(start)
        print("FANOUT", count, len(expected), flush=True)
    elif mode == "reload":
        tls.sendall(b"GET\n")
        print("A", reader.line())
        print("READY", flush=True)
        deadline = time.time() + 30
        while not os.path.exists(sys.argv[5]) and time.time() < deadline:
            time.sleep(0.02)
        second = connect(port, ca, name)
        print("PEER-B", common_name(second), flush=True)
        second_reader = Reader(second)
        second.sendall(b"PING b\n")
        print("B", second_reader.line(), flush=True)
        tls.sendall(b"PING a\n")
        print("A", reader.line(), flush=True)
    """#

    static var python: String {
        ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "python3"
    }

    /// Runs one mode to completion (bounded) and returns its output.
    static func run(_ mode: String, port: Int, ca: String, name: String = "127.0.0.1", _ arguments: [String] = [],
                    stdin: String? = nil, timeout: TimeInterval = 20) throws -> RunResult {
        try runProcess(python, ["-c", script, mode, "\(port)", ca, name] + arguments, stdin: stdin, timeout: timeout)
    }
}
