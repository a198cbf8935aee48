import Foundation

/// A started `sleep 30`: a child that stays running until a test ends it.
func startSleeper() throws -> Process {
    let sleeper = Process()
    sleeper.executableURL = URL(fileURLWithPath: "/bin/sleep")
    sleeper.arguments = ["30"]
    try sleeper.run()
    return sleeper
}
