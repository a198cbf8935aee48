import CLibUV

/// An error reported by libuv, carried as its negative errno-style code.
///
/// Two errors are equal when their codes are equal.
public struct UVError: Error, CustomStringConvertible, Equatable {
    /// The negative libuv error code, for example `UV_EADDRINUSE` (-98 on Linux).
    public let code: Int32

    /// Wraps a negative libuv error code.
    public init(code: Int32) {
        self.code = code
    }

    /// The symbolic name of the error, for example "EADDRINUSE".
    public var name: String {
        // The `_r` variant writes into our buffer; plain uv_err_name leaks a
        // heap string for codes it does not know.
        Self.text(code, uv_err_name_r)
    }

    /// The human-readable message libuv gives for the error, for example "address already in use".
    public var description: String {
        Self.text(code, uv_strerror_r)
    }

    /// True when a bind or listen failed because the address is taken.
    public var isAddressInUse: Bool {
        code == UV_EADDRINUSE.rawValue
    }

    /// Returns normally when `rc` is zero or positive, and throws it as a `UVError` when it is negative.
    public static func check(_ rc: Int32) throws(UVError) {
        if rc < 0 { throw UVError(code: rc) }
    }

    private static func text(
        _ code: Int32,
        _ render: (Int32, UnsafeMutablePointer<CChar>?, Int) -> UnsafeMutablePointer<CChar>?
    ) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 128) { buffer in
            buffer.initialize(repeating: 0)
            _ = render(code, buffer.baseAddress, buffer.count)
            return String(cString: buffer.baseAddress!)
        }
    }
}

extension UVError {
    /// Builds an error from a libuv errno enum case such as `UV_EPIPE`.
    init(_ errno: uv_errno_t) {
        self.init(code: errno.rawValue)
    }
}
