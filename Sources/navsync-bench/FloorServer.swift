import UVLoop

/// The yardstick: the least a broadcaster can do. It speaks just enough of
/// navsync's protocol (`WATCH`, `SELECT <screen>`) and sends each event with
/// its own write to each watcher, with no batching, no state file, no room
/// lookup and no slow-watcher policy.
final class FloorServer {
    private final class Client {
        let connection: StreamConnection
        var pending: [UInt8] = []
        var watcherIndex: Int?
        init(connection: StreamConnection) { self.connection = connection }
    }

    private let loop: EventLoop
    private var listener: StreamListener?
    private var watchers: [Client] = []
    private var clients: [ObjectIdentifier: Client] = [:]
    private var revision = 0

    init(loop: EventLoop) {
        self.loop = loop
    }

    func listen(host: String, port: Int) throws(UVError) -> Int {
        let listener = try StreamListener.tcp(loop: loop, host: host, port: port, backlog: 4096) { [unowned self] connection in
            self.accept(connection)
        }
        self.listener = listener
        return listener.port
    }

    private func accept(_ connection: StreamConnection) {
        let client = Client(connection: connection)
        clients[ObjectIdentifier(client)] = client
        connection.setNoDelay(true)
        connection.onRead = { [unowned self, unowned client] bytes in
            client.pending.append(contentsOf: bytes)
            while let end = client.pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = client.pending[..<end]
                self.handle(line, from: client)
                client.pending.removeSubrange(...end)
            }
        }
        connection.onEnd = { [unowned self, unowned client] _ in self.drop(client) }
        connection.startReading()
    }

    private func handle(_ line: ArraySlice<UInt8>, from client: Client) {
        let text = String(decoding: line, as: UTF8.self)
        if text.hasPrefix("WATCH") {
            if client.watcherIndex == nil {
                client.watcherIndex = watchers.count
                watchers.append(client)
            }
            client.connection.write([Array("STATE \(revision) /red\n".utf8)])
        } else if text.hasPrefix("SELECT ") {
            revision += 1
            let screen = text.dropFirst(7)
            client.connection.write([Array("OK \(revision)\n".utf8)])
            let event = Array("EVENT \(revision) select /\(screen)\n".utf8)
            for watcher in watchers { watcher.connection.write([event]) }
        } else {
            client.connection.write([Array("ERR unknown-command\n".utf8)])
        }
    }

    private func drop(_ client: Client) {
        if let index = client.watcherIndex {
            let last = watchers.removeLast()
            if last !== client {
                watchers[index] = last
                last.watcherIndex = index
            }
            client.watcherIndex = nil
        }
        clients[ObjectIdentifier(client)] = nil
        client.connection.close()
    }
}
