import NavSyncCore
import UVLoop

/// Reads and checks a `--screens` file, at start and on SIGHUP.
func loadCatalog(_ path: String) throws(DaemonStartError) -> Catalog {
    let bytes: [UInt8]?
    do {
        bytes = try SyncFile.readAll(path: path)
    } catch {
        throw DaemonStartError("catalog \(path): cannot read: \(error)")
    }
    guard let bytes else { throw DaemonStartError("catalog \(path): no such file") }
    do {
        return try CatalogFile.decode(bytes)
    } catch {
        throw DaemonStartError("catalog \(path): \(error)")
    }
}
