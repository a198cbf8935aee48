import Glibc
import UVLoop

/// A navsyncd the bench starts, stops and starts again itself (the restart
/// and history modes): the restart has to be timed from the moment the new
/// process exists, so it cannot be left to a script. Output goes to a log
/// file; the process is stopped by its PID and waited for.
final class DaemonProcess {
    let executable: String
    let arguments: [String]
    let logPath: String
    private(set) var pid: pid_t = 0

    init(executable: String, arguments: [String], logPath: String) {
        self.executable = executable
        self.arguments = arguments
        self.logPath = logPath
    }

    func start() throws(BenchError) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, nil, argv, environ)
        guard rc == 0 else { throw BenchError(description: "cannot start \(executable): \(String(cString: strerror(rc)))") }
        pid = child
    }

    /// Sends `signal` and waits for the process to end; returns its wait status.
    @discardableResult
    func stop(signal: Int32 = SIGTERM) -> Int32 {
        guard pid > 0 else { return 0 }
        kill(pid, signal)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        pid = 0
        return status
    }

    /// True while the process has not ended (reaps it when it has).
    var isRunning: Bool {
        guard pid > 0 else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            pid = 0
            return false
        }
        return true
    }

    func rssKiB() -> Int? { pid > 0 ? ProcStats.statusKilobytes(pid: pid, field: "VmRSS") : nil }

    /// The opening both modes share: a deadline for the whole run, the
    /// daemon started, and the driver that will change its rooms (not yet
    /// connected). Nil when the daemon could not be started (`fail` has run).
    func launch(loop: EventLoop, host: String, port: Int, rooms: Int, timeoutSeconds: UInt64,
                onTimeout: @escaping () -> Void, fail: @escaping (String) -> Void) -> ChangeDriver? {
        let deadline = LoopTimer(loop: loop)
        deadline.unref()
        deadline.start(afterMilliseconds: timeoutSeconds * 1000, onTimeout)
        do {
            try start()
        } catch {
            fail(error.description)
            return nil
        }
        return ChangeDriver(loop: loop, host: host, port: port, rooms: rooms, fail: fail)
    }
}
