import Glibc
import UVLoop
import XCTest

final class StreamListenerTests: LoopTestCase {
    func test_listener_port0_reportsRealPort() throws {
        let listener = try StreamListener.tcp(loop: loop, host: "127.0.0.1", port: 0) { $0.close() }
        defer { listener.close() }
        XCTAssertGreaterThan(listener.port, 0)
        XCTAssertEqual(listener.boundAddress, "127.0.0.1:\(listener.port)")
    }

    func test_listener_portAlreadyTaken_throwsAddressInUse() throws {
        let first = try StreamListener.tcp(loop: loop, host: "127.0.0.1", port: 0) { $0.close() }
        defer { first.close() }
        XCTAssertThrowsError(try StreamListener.tcp(loop: loop, host: "127.0.0.1", port: first.port) { $0.close() }) {
            let error = $0 as? UVError
            XCTAssertEqual(error?.isAddressInUse, true, "got \(String(describing: error?.name))")
            XCTAssertEqual(error?.name, "EADDRINUSE")
        }
    }

    func test_listener_hostName_throwsInvalidArgument() {
        XCTAssertThrowsError(try StreamListener.tcp(loop: loop, host: "localhost", port: 0) { $0.close() }) {
            XCTAssertEqual(($0 as? UVError)?.name, "EINVAL")
        }
    }

    func test_listener_closeInsideOnConnection_keepsTheConnection() throws {
        var listener: StreamListener?
        var accepted: StreamConnection?
        listener = try StreamListener.tcp(loop: loop, host: "127.0.0.1", port: 0) { connection in
            accepted = connection
            listener?.close()
        }
        var client: StreamConnection?
        StreamConnection.connectTCP(loop: loop, host: "127.0.0.1", port: listener!.port) { client = try? $0.get() }
        spin("accept") { accepted != nil && client != nil }
        let inbox = Inbox(try XCTUnwrap(accepted))
        client?.write("still open")
        spin("bytes after listener close") { inbox.text == "still open" }
    }

    func test_listener_ipv6Loopback_echoes() throws {
        let listener: StreamListener
        do {
            listener = try StreamListener.tcp(loop: loop, host: "::1", port: 0) { $0.close() }
        } catch {
            throw XCTSkip("no IPv6 loopback here: \(error)")
        }
        XCTAssertEqual(listener.boundAddress, "[::1]:\(listener.port)")
        listener.close()

        let (server, client) = try connectedPair(host: "::1")
        XCTAssertTrue(server.peerDescription.hasPrefix("[::1]:"), server.peerDescription)
        server.onRead = { server.write([Array($0)]) }
        server.startReading()
        let inbox = Inbox(client)
        client.write("over six")
        spin("IPv6 echo") { inbox.text == "over six" }
    }

    func test_unixListener_socketIsPrivateAndRemovedOnClose() throws {
        let path = temporaryPath("private.sock")
        let listener = try StreamListener.unix(loop: loop, path: path) { $0.close() }
        XCTAssertEqual(listener.boundAddress, "unix:" + path)
        XCTAssertEqual(listener.port, 0)

        var info = stat()
        XCTAssertEqual(lstat(path, &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFSOCK)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)

        listener.close()
        XCTAssertEqual(lstat(path, &info), -1, "socket file should be gone")
        XCTAssertEqual(errno, ENOENT)
    }

    func test_unixListener_echoesOverUnixSocket() throws {
        let path = temporaryPath("echo.sock")
        var accepted: StreamConnection?
        let listener = try StreamListener.unix(loop: loop, path: path) { accepted = $0 }
        defer { listener.close() }
        var connected: Result<StreamConnection, UVError>?
        StreamConnection.connectUnix(loop: loop, path: path) { connected = $0 }
        spin("unix connection") { accepted != nil && connected != nil }
        let client = try XCTUnwrap(connected).get()
        let server = try XCTUnwrap(accepted)
        XCTAssertEqual(server.peerDescription, "unix")
        client.setNoDelay(true)  // no-op for pipes

        server.onRead = { server.write([Array($0)]) }
        server.startReading()
        let inbox = Inbox(client)
        client.write("via the file system")
        spin("unix echo") { inbox.text == "via the file system" }
    }

    func test_unixListener_staleSocketFile_isReplaced() throws {
        let path = temporaryPath("stale.sock")
        try makeStaleSocket(at: path)

        let listener = try StreamListener.unix(loop: loop, path: path) { $0.close() }
        defer { listener.close() }
        var connected: Result<StreamConnection, UVError>?
        StreamConnection.connectUnix(loop: loop, path: path) { connected = $0 }
        spin("connect to the new listener") { connected != nil }
        try XCTUnwrap(connected).get().close()
    }

    func test_unixListener_liveSocket_throwsAddressInUseAndLeavesItAlone() throws {
        let path = temporaryPath("live.sock")
        let first = try StreamListener.unix(loop: loop, path: path) { $0.close() }
        defer { first.close() }
        XCTAssertThrowsError(try StreamListener.unix(loop: loop, path: path) { $0.close() }) {
            XCTAssertEqual(($0 as? UVError)?.isAddressInUse, true)
        }
        var info = stat()
        XCTAssertEqual(lstat(path, &info), 0, "the live socket file must survive")
    }

    func test_unixListener_regularFileInTheWay_isNotRemoved() throws {
        let path = temporaryPath("regular")
        let file = try SyncFile.openForAppend(path: path)
        try file.append(Array("keep me".utf8))
        file.close()
        XCTAssertThrowsError(try StreamListener.unix(loop: loop, path: path) { $0.close() })
        XCTAssertEqual(try SyncFile.readAll(path: path), Array("keep me".utf8))
    }

    func test_connectUnix_missingPath_failsLater() {
        var result: Result<StreamConnection, UVError>?
        StreamConnection.connectUnix(loop: loop, path: temporaryPath("nobody.sock")) { result = $0 }
        XCTAssertNil(result)
        spin("failure") { result != nil }
        guard case .failure(let error)? = result else { return XCTFail("connected to nothing") }
        XCTAssertEqual(error.name, "ENOENT")
    }

    func test_unixListener_pathTooLong_throws() {
        let path = "/tmp/" + String(repeating: "x", count: 120)
        XCTAssertThrowsError(try StreamListener.unix(loop: loop, path: path) { $0.close() }) {
            XCTAssertEqual(($0 as? UVError)?.name, "ENAMETOOLONG")
        }
    }

    /// Binds a Unix socket at `path` and closes it without unlinking, as a crashed daemon would.
    private func makeStaleSocket(at path: String) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.utf8) }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        XCTAssertEqual(rc, 0, "bind: \(errno)")
    }
}
