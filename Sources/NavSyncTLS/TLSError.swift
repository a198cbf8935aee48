import COpenSSL

/// Why a TLS context could not be built or a connection failed, in one line
/// a log or a client's complaint can show as it is.
public struct TLSError: Error, Equatable, Sendable, CustomStringConvertible {
    public let reason: String

    public init(_ reason: String) { self.reason = reason }

    public var description: String { reason }

    /// `context`, then what OpenSSL's error queue says first (the root
    /// cause; later entries only repeat where it surfaced). Empties the queue.
    static func fromQueue(_ context: String) -> TLSError {
        let detail = OpenSSLErrors.drain()
        return TLSError(detail.map { "\(context): \($0)" } ?? context)
    }
}

/// OpenSSL's per-thread error queue. Every operation clears it first, so what
/// it holds afterwards belongs to that operation alone.
enum OpenSSLErrors {
    static func clear() { ERR_clear_error() }

    /// The first queued error's reason ("wrong version number"), or nil; the queue is emptied.
    static func drain() -> String? {
        let first = ERR_get_error()
        ERR_clear_error()
        guard first != 0 else { return nil }
        if let text = ERR_reason_error_string(first) { return String(cString: text) }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(first, &buffer, buffer.count)
        // "error:80000002:system library::No such file or directory": the words after the codes.
        let full = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return full.split(separator: ":", omittingEmptySubsequences: true).last.map(String.init) ?? full
    }
}
