/// Tells an HTTP connection from a line-protocol one by its first line, so
/// nothing a browser sends can ever run as a command.
///
/// A first line of the form `METHOD SP TARGET SP HTTP/1.0|1.1` (METHOD one or
/// more capital letters, TARGET starting with `/` and holding no blank, CRLF
/// or LF) makes the connection HTTP. Anything else is the line protocol,
/// usually judged on the first byte or two, so a line client pays one branch.
///
/// A line that *starts* like a request line (capitals, one space, `/`) is read
/// whole before it is judged, even past `--max-line`, up to
/// `maxRequestLineBytes`; longer, it is `requestLineTooLong` (414), so a page
/// cannot hide a request behind a very long path.
///
/// Anything else is decided within `maxMethodBytes + 1` bytes, well inside
/// the smallest `--max-line`: a run of capitals longer than any HTTP method
/// is the line protocol, whose framer then answers `line-too-long` for it
/// like for any other over-long line. So while undecided the sniffer never
/// holds more than `maxRequestLineBytes`, and never more than
/// `maxMethodBytes + 1` unless the bytes begin like a request line.
///
/// The sniffer keeps every byte it was given until it decides; the caller
/// then takes them with `takeBytes()` and hands them to whichever side won.
public struct ProtocolSniffer: Sendable {
    public enum Verdict: Equatable, Sendable {
        case undecided
        case lineProtocol
        case http
        case requestLineTooLong
    }

    /// Bytes of a request line, its line ending included, read before judging.
    public static let maxRequestLineBytes = 8 * 1024

    /// Capital letters a method may have. The longest registered HTTP method
    /// (`UPDATEREDIRECTREF`) has 17; a longer run cannot start a request the
    /// daemon would serve, and without a cap a peer sending nothing but
    /// capitals was buffered for ever. Kept below `Limits.smallestMaxLineBytes`
    /// so such a line is judged before `--max-line` at any setting.
    public static let maxMethodBytes = 32

    private enum Stage: Sendable {
        /// Reading the method's capital letters; `count` so far.
        case method(count: Int)
        /// Read the space after the method; the target's `/` must follow.
        case afterMethod
        /// Looking for the end of a candidate request line; bytes before
        /// `scanned` hold no `\n`.
        case candidate(scanned: Int)
        case decided(Verdict)
    }

    private var stage = Stage.method(count: 0)
    private var buffer: [UInt8] = []

    public init() {}

    public var verdict: Verdict {
        if case .decided(let verdict) = stage { return verdict }
        return .undecided
    }

    /// Feeds more of the connection's first bytes. Once decided, further
    /// bytes are still kept (the caller should stop feeding).
    public mutating func feed(_ bytes: some Collection<UInt8>) -> Verdict {
        let start = buffer.count
        buffer.append(contentsOf: bytes)
        var index = start
        while index < buffer.count {
            switch stage {
            case .decided(let verdict):
                return verdict
            case .method(let count):
                let byte = buffer[index]
                if Self.isCapital(byte) {
                    stage = count < Self.maxMethodBytes ? .method(count: count + 1) : .decided(.lineProtocol)
                } else if byte == UInt8(ascii: " ") && count > 0 {
                    stage = .afterMethod
                } else {
                    stage = .decided(.lineProtocol)
                }
                index += 1
            case .afterMethod:
                stage = buffer[index] == UInt8(ascii: "/") ? .candidate(scanned: index + 1) : .decided(.lineProtocol)
                index += 1
            case .candidate(let scanned):
                let from = max(scanned, index)
                let end = min(buffer.count, Self.maxRequestLineBytes)
                if from < end, let newline = buffer[from..<end].firstIndex(of: UInt8(ascii: "\n")) {
                    stage = .decided(Self.isRequestLine(buffer[..<newline]) ? .http : .lineProtocol)
                } else if buffer.count >= Self.maxRequestLineBytes {
                    stage = .decided(.requestLineTooLong)
                } else {
                    stage = .candidate(scanned: buffer.count)
                }
                index = buffer.count
            }
        }
        return verdict
    }

    /// Bytes held so far (all of them while undecided).
    public var bufferedByteCount: Int { buffer.count }

    /// Every byte fed so far, handed over once; the sniffer is empty after.
    public mutating func takeBytes() -> [UInt8] {
        defer { buffer = [] }
        return buffer
    }

    /// The whole first line, without `\n`: capitals, one space, a target
    /// starting with `/` and holding no space or CR, one space, the version,
    /// and an optional CR.
    static func isRequestLine(_ line: ArraySlice<UInt8>) -> Bool {
        var line = line
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        let version = line.suffix(9)
        guard version.count == 9, version.first == UInt8(ascii: " ") else { return false }
        let name = version.dropFirst()
        guard name.elementsEqual("HTTP/1.1".utf8) || name.elementsEqual("HTTP/1.0".utf8) else { return false }
        let head = line.dropLast(9)
        guard let space = head.firstIndex(of: UInt8(ascii: " ")), space > head.startIndex,
              head[..<space].allSatisfy(isCapital) else { return false }
        let target = head[(space + 1)...]
        return target.first == UInt8(ascii: "/")
            && !target.contains(UInt8(ascii: " ")) && !target.contains(UInt8(ascii: "\r"))
    }

    @inline(__always)
    static func isCapital(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")
    }
}
