import CLibUV
import Glibc
import NavSyncCore

/// An IPv4 or IPv6 socket address parsed from a literal, stored in a `sockaddr_storage`.
struct SocketAddress {
    private var storage = sockaddr_storage()

    /// Parses an IPv4 literal ("127.0.0.1") or IPv6 literal ("::1", with or without brackets).
    /// Host names are not resolved. Throws EINVAL for anything else.
    init(host: String, port: Int) throws(UVError) {
        guard (0...65535).contains(port) else { throw UVError(UV_EINVAL) }
        var bare = host
        if bare.hasPrefix("["), bare.hasSuffix("]") { bare = String(bare.dropFirst().dropLast()) }
        let rc4 = withUnsafeMutableBytes(of: &storage) { raw in
            uv_ip4_addr(bare, Int32(port), raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self))
        }
        if rc4 == 0 { return }
        storage = sockaddr_storage()
        let rc6 = withUnsafeMutableBytes(of: &storage) { raw in
            uv_ip6_addr(bare, Int32(port), raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self))
        }
        if rc6 != 0 { throw UVError(UV_EINVAL) }
    }

    /// Reads an address with `fill`, a libuv getsockname/getpeername call.
    init(reading fill: (UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<Int32>) -> Int32) throws(UVError) {
        var length = Int32(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutableBytes(of: &storage) { raw in
            fill(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length)
        }
        try UVError.check(rc)
    }

    /// Calls `body` with the address as the `sockaddr` pointer libuv expects.
    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>) -> R) -> R {
        withUnsafeBytes(of: storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self))
        }
    }

    /// The port in host byte order (0 for unknown families).
    var port: Int {
        withUnsafeBytes(of: storage) { raw in
            switch Int32(storage.ss_family) {
            case AF_INET: Int(UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port))
            case AF_INET6: Int(UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port))
            default: 0
            }
        }
    }

    /// The address as the guessing throttle counts it (an IPv6 /64,
    /// an IPv4-mapped address as IPv4); `.local` for other families.
    var peerAddress: PeerAddress {
        withUnsafeBytes(of: storage) { raw in
            switch Int32(storage.ss_family) {
            case AF_INET:
                return withUnsafeBytes(of: raw.load(as: sockaddr_in.self).sin_addr) { PeerAddress(ipv4: $0) }
            case AF_INET6:
                return withUnsafeBytes(of: raw.load(as: sockaddr_in6.self).sin6_addr) { PeerAddress(ipv6: $0) }
            default:
                return .local
            }
        }
    }

    /// "127.0.0.1:5555" or "[::1]:5555".
    var description: String {
        withUnsafeBytes(of: storage) { raw in
            withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { text in
                text.initialize(repeating: 0)
                switch Int32(storage.ss_family) {
                case AF_INET:
                    _ = uv_ip4_name(raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self), text.baseAddress, text.count)
                    return "\(String(cString: text.baseAddress!)):\(port)"
                case AF_INET6:
                    _ = uv_ip6_name(raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self), text.baseAddress, text.count)
                    return "[\(String(cString: text.baseAddress!))]:\(port)"
                default:
                    return "unknown"
                }
            }
        }
    }
}

/// Largest Unix socket path: `sun_path` holds 108 bytes including the terminating NUL.
/// libuv 1.44 silently truncates longer paths, so they are refused up front.
func checkSocketPathLength(_ path: String) throws(UVError) {
    if path.utf8.count >= 108 { throw UVError(UV_ENAMETOOLONG) }
}
