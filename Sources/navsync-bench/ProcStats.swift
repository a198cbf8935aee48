import Glibc

/// Figures the bench reads about processes: its own and the server's.
/// Linux only (`/proc`).
enum ProcStats {
    /// Monotonic clock in nanoseconds.
    static func nowNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// This process's user + system CPU time, in nanoseconds.
    static func ownCPUNanoseconds() -> UInt64 {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func ns(_ t: timeval) -> UInt64 { UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_usec) * 1_000 }
        return ns(usage.ru_utime) + ns(usage.ru_stime)
    }

    /// Raises the soft limit on open files to the hard limit; returns the limit now in force.
    @discardableResult
    static func raiseOpenFileLimit() -> Int {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return Int(limit.rlim_cur)
    }

    static func readFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A `kB` figure from `/proc/PID/status`, such as `VmRSS` or `VmHWM`.
    static func statusKilobytes(pid: Int32, field: String) -> Int? {
        guard let text = readFile("/proc/\(pid)/status") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let digits = line.dropFirst(field.count + 1).filter { $0.isNumber }
            return Int(digits)
        }
        return nil
    }

    /// The sum of a `kB` figure over several processes; nil when any is unreadable or none given.
    static func statusKilobytes(pids: [Int32], field: String) -> Int? {
        let values = pids.map { statusKilobytes(pid: $0, field: field) }
        guard !values.isEmpty, values.allSatisfy({ $0 != nil }) else { return nil }
        return values.reduce(0) { $0 + $1! }
    }

    /// utime + stime of every thread, live or gone, from `/proc/PID/stat`, in nanoseconds
    /// (resolution one clock tick, usually 10 ms).
    static func statCPUNanoseconds(pid: Int32) -> UInt64? {
        guard let text = readFile("/proc/\(pid)/stat"),
              let close = text.lastIndex(of: ")") else { return nil }
        // Fields after the command name; utime and stime are fields 14 and 15 of the whole line.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let utime = UInt64(fields[11]), let stime = UInt64(fields[12]) else { return nil }
        let ticks = UInt64(sysconf(Int32(_SC_CLK_TCK)))
        return (utime + stime) * 1_000_000_000 / max(ticks, 1)
    }

    /// CPU time of the process's live threads in nanoseconds, from `/proc/PID/task/*/schedstat`
    /// (nanosecond resolution; threads that exited are not counted).
    static func schedCPUNanoseconds(pid: Int32) -> UInt64? {
        guard let dir = opendir("/proc/\(pid)/task") else { return nil }
        defer { closedir(dir) }
        var total: UInt64 = 0
        var found = false
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard let first = name.first, first.isNumber,
                  let text = readFile("/proc/\(pid)/task/\(name)/schedstat"),
                  let ran = text.split(separator: " ").first.flatMap({ UInt64($0) }) else { continue }
            total += ran
            found = true
        }
        return found ? total : nil
    }

    /// "0.52 0.61 0.70" from /proc/loadavg.
    static func loadAverage() -> String {
        guard let text = readFile("/proc/loadavg") else { return "?" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }
}
