/// The part of a Redis connection a user of it relies on: commands whose
/// replies come back in sending order, a subscription's pushes, and closing.
/// `RedisConnection` is the real one; a test can stand in a scripted one
/// (no IO) and answer, push and drop in whatever order it needs to check.
///
/// The contract is `RedisConnection`'s: `send` returns false and never calls
/// `then` when the link cannot take commands; otherwise `then` runs exactly
/// once, with the reply or with nil when the link is lost first.
public protocol RedisLink: AnyObject {
    @discardableResult
    func send(_ arguments: [[UInt8]], then: @escaping (RedisReply?) -> Void) -> Bool

    /// Every push after this (subscribe confirmations and messages) goes to `onPush`.
    @discardableResult
    func subscribe(_ channels: [String], onPush: @escaping (RedisReply) -> Void) -> Bool

    /// Ends the link: pending replies are answered with nil, and the lost
    /// callback given when it was made does not run.
    func close()
}

extension RedisLink {
    /// A command of text arguments.
    @discardableResult
    public func send(_ arguments: [String], then: @escaping (RedisReply?) -> Void) -> Bool {
        send(arguments.map { Array($0.utf8) }, then: then)
    }
}
