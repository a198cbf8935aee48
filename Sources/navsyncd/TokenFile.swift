import UVLoop

/// `--token-file`: the first line of the file is the shared secret.
enum TokenFile {
    static func read(_ path: String) throws(DaemonStartError) -> String {
        let bytes: [UInt8]?
        do {
            bytes = try SyncFile.readAll(path: path)
        } catch {
            throw DaemonStartError("token file \(path): cannot read: \(error)")
        }
        guard let bytes else { throw DaemonStartError("token file \(path): no such file") }
        var line = bytes.prefix { $0 != UInt8(ascii: "\n") }
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        let token = String(decoding: line, as: UTF8.self).trimmingBlanks()
        guard !token.isEmpty else { throw DaemonStartError("token file \(path): first line is empty") }
        return token
    }
}

extension String {
    func trimmingBlanks() -> String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
