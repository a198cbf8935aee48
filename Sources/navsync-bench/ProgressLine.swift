import Glibc

/// One progress line of a bench mode on stderr, `tag: message`, unless
/// `quiet`. Written straight to the descriptor, unbuffered, so it shows at
/// once and in order with what the started daemons print.
func writeProgress(_ tag: @autoclosure () -> String, quiet: Bool, _ message: @autoclosure () -> String) {
    guard !quiet else { return }
    let text = "\(tag()): \(message())\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
}
