/// A peer as the guessing throttle and the TLS handshake share count
/// it (PROTOCOL.md *Guessing*): one IPv4 address; an IPv6 network of 64
/// bits, because one host is routinely given a whole /64 and could change
/// addresses within it at will; and every Unix-socket peer as one address,
/// since the socket does not tell local users apart. An IPv4-mapped IPv6
/// address (`::ffff:a.b.c.d`, what a dual-stack listener reports for an
/// IPv4 client) is its IPv4 address, so the two spellings of a peer are one.
public enum PeerAddress: Hashable, Sendable, CustomStringConvertible {
    case ipv4(UInt32)
    /// The first 64 bits of the address.
    case ipv6Network(UInt64)
    /// A Unix-socket peer, or a transport that has no address (tests).
    case local

    /// From the 4 bytes of an IPv4 address, in network order.
    public init(ipv4 bytes: some Collection<UInt8>) {
        self = .ipv4(bytes.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
    }

    /// From the 16 bytes of an IPv6 address, in network order.
    public init(ipv6 bytes: some Collection<UInt8>) {
        let octets = Array(bytes.prefix(16))
        guard octets.count == 16 else {
            self = .local
            return
        }
        let mappedPrefix: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]
        if Array(octets[..<12]) == mappedPrefix {
            self.init(ipv4: octets[12...])
            return
        }
        self = .ipv6Network(octets[..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    /// For logs: `127.0.0.1`, `2001:db8:0:1::/64`, `unix`.
    public var description: String {
        switch self {
        case .ipv4(let value):
            return (0..<4).map { String((value >> UInt32(24 - 8 * $0)) & 0xff) }.joined(separator: ".")
        case .ipv6Network(let value):
            let groups = (0..<4).map { String((value >> UInt64(48 - 16 * $0)) & 0xffff, radix: 16) }
            return groups.joined(separator: ":") + "::/64"
        case .local:
            return "unix"
        }
    }
}
