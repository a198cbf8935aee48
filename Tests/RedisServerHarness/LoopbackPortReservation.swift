import Glibc
import Synchronization

/// A loopback TCP port held for a test: a socket bound to `127.0.0.1:port`
/// with SO_REUSEADDR and never listening. While it is held, the kernel hands
/// the port to no one binding port 0 (a daemon of a test running beside
/// this one) and uses it as no outgoing connection's source port, so
/// connecting to it is refused; yet a server meant to take it (a daemon
/// given `--listen 127.0.0.1:port`, a restarted redis-server) can still bind
/// and listen there, since those set SO_REUSEADDR too and this socket does
/// not listen. A port probed and released instead could be taken by anyone
/// in between.
public final class LoopbackPortReservation: @unchecked Sendable {  // fd and port are set once, in init
    public let port: Int
    private let fd: Int32

    public init() {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        self.fd = fd
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 ? getsockname(fd, pointer, &length) : -1
            }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }

    /// Reservations kept until the process ends, for ports a test only
    /// names (`closedPort()`): a few descriptors, never reused.
    private static let kept = Mutex<[LoopbackPortReservation]>([])

    /// A port that stays closed (and free for an explicit bind) for the
    /// rest of the test process.
    public static func heldClosedPort() -> Int {
        let reservation = LoopbackPortReservation()
        kept.withLock { $0.append(reservation) }
        return reservation.port
    }
}
