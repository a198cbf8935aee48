import Foundation
import Glibc
import Synchronization

/// The children the tests started and no wait has seen end yet, so that an
/// interrupted test run does not leave them running without a parent.
///
/// Foundation starts every child in a process group of its own: a Ctrl-C, or
/// a `kill -- -PGID` of the run, reaches the test process only, which dies
/// without running a single `defer`, and its redis-server and navsyncd live
/// on. So on the first child tracked, the test process takes SIGINT, SIGTERM
/// and SIGHUP: it SIGKILLs every child still listed, by PID, then dies of the
/// signal as it would have (or hands it to the handler that was there before).
/// SIGKILL of the test process cannot be caught; nothing here helps then.
public enum LiveChildren {
    /// The signals a run is interrupted with.
    static let interruptions: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// Lists `process` (started) until a ChildExit wait sees it end, or
    /// Foundation does (checked at the next `track`).
    public static func track(_ process: Process) {
        let pid = process.processIdentifier
        guard pid > 0 else { return }
        state.withLock { state in
            if !state.installed {
                state.installed = true
                installHandlers()
            }
            // A child a harness saw end only through Foundation (it checked
            // isRunning, never waited) leaves the list here.
            for child in state.children where child.process.map({ !$0.isRunning }) ?? true { unlist(child.pid) }
            state.children.removeAll { child in child.process.map { !$0.isRunning } ?? true }
            for slot in 0..<capacity where slots[slot] == 0 {
                slots[slot] = pid
                state.children.append(Child(pid: pid, process: process))
                return
            }
            // More live children than any test starts: this one just is not covered.
        }
    }

    /// Called by ChildExit once it has seen `pid` end: from then on the PID
    /// may be another process's, and is never signalled from here.
    static func ended(_ pid: pid_t) {
        state.withLock { state in
            unlist(pid)
            state.children.removeAll { $0.pid == pid }
        }
    }

    /// The PIDs listed now.
    static var pids: [pid_t] {
        state.withLock { _ in (0..<capacity).map { slots[$0] }.filter { $0 != 0 } }
    }

    /// A listed child; weak, so that listing keeps no Process (and its pipes) alive.
    private struct Child {
        let pid: pid_t
        weak var process: Process?
    }

    private struct State {
        var installed = false
        var children: [Child] = []
    }

    /// Every slot write, the list and the one-time install happen under this.
    private static let state = Mutex(State())

    private static func unlist(_ pid: pid_t) {
        for slot in 0..<capacity where slots[slot] == pid { slots[slot] = 0 }
    }

    /// SIGKILLs every listed child; what the handler does before dying.
    static func killAll() {
        for slot in 0..<capacity where slots[slot] > 0 { kill(slots[slot], SIGKILL) }
    }

    private static let capacity = 1024
    // The signal handler reads these with no lock (a lock is not async-signal-
    // safe): plain memory allocated once, before the handlers exist, and never
    // freed, so the handler never races an allocation or a Swift access check.
    // A slot is one aligned 32-bit word; the handler sees an old or a new PID,
    // never a torn one. Written only under `state`'s lock.
    nonisolated(unsafe) private static let slots: UnsafeMutablePointer<pid_t> = {
        let slots = UnsafeMutablePointer<pid_t>.allocate(capacity: capacity)
        slots.initialize(repeating: 0, count: capacity)
        return slots
    }()
    // The action each signal had before ours, by signal number; restored by the
    // handler before it raises the signal again. Written once, under `state`'s lock.
    nonisolated(unsafe) private static let previous: UnsafeMutablePointer<sigaction> = {
        let previous = UnsafeMutablePointer<sigaction>.allocate(capacity: Int(NSIG))
        previous.initialize(repeating: sigaction(), count: Int(NSIG))
        return previous
    }()
    /// Called once, under `state`'s lock.
    private static func installHandlers() {
        // Made now, so the handler never runs their one-time initialisers.
        _ = slots
        _ = previous
        _ = onInterruption
        for signal in interruptions {
            var current = sigaction()
            sigaction(signal, nil, &current)
            // A run started with the signal ignored (nohup) keeps ignoring it.
            if address(current.__sigaction_handler.sa_handler) == address(SIG_IGN) { continue }
            previous[Int(signal)] = current
            var action = sigaction()
            action.__sigaction_handler.sa_handler = onInterruption
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            sigaction(signal, &action, nil)
        }
    }

    private static let onInterruption: @convention(c) (Int32) -> Void = { signal in
        LiveChildren.killAll()
        var before = LiveChildren.previous[Int(signal)]
        sigaction(signal, &before, nil)
        // Blocked while this handler runs; delivered as it returns.
        raise(signal)
    }

    /// True when `signal` is handled here now.
    static func handles(_ signal: Int32) -> Bool {
        var current = sigaction()
        sigaction(signal, nil, &current)
        return address(current.__sigaction_handler.sa_handler) == address(onInterruption)
    }

    /// True when `signal` is ignored, as in a run started under nohup or as a
    /// shell's background job: then it is left ignored, not handled here.
    static func isIgnored(_ signal: Int32) -> Bool {
        var current = sigaction()
        sigaction(signal, nil, &current)
        return address(current.__sigaction_handler.sa_handler) == address(SIG_IGN)
    }

    /// C function pointers compare by address (Swift gives them no ==).
    private static func address(_ handler: (@convention(c) (Int32) -> Void)?) -> Int {
        handler.map { unsafeBitCast($0, to: Int.self) } ?? 0
    }
}
