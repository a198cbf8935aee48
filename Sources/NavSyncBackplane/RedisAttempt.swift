import RedisClient

/// One try at reaching Redis: the link that sends commands and the link that
/// only listens to the fleet's channels, made together and ended together.
///
/// Every reconnect is a new attempt, and the old one is retired first. What
/// an attempt asks on the store's behalf while connecting — the handshake,
/// the reads of every room, the heartbeat, a room's recheck — is answered
/// through `ask` and `subscribe` only while it is the current attempt, so a
/// slow answer from a connection already given up can never act on the
/// rooms as if it were news. This replaces a generation counter compared in
/// each of those callbacks, which every new callback had to remember.
///
/// Change rounds do not go through that guard: they `send` on
/// `commandLink`, whose pending replies a retired link answers with nil,
/// and the round's handler turns that nil into `unavailable` for the
/// clients that wait.
/// Must be used on the loop thread only.
final class RedisAttempt {
    /// Makes one link to Redis from its `onReady` and `onGone` callbacks.
    typealias Connector = (_ onReady: @escaping () -> Void, _ onGone: @escaping (String) -> Void) -> any RedisLink

    private var links: (commands: any RedisLink, subscriber: any RedisLink)?
    /// False once the attempt was given up: its callbacks are dropped.
    private(set) var isCurrent = true
    private var readyLinks = 0

    /// Makes both links. `onBothReady` runs once both have connected,
    /// `onLost` when either fails; neither runs after `retire`.
    init(connector: Connector, onBothReady: @escaping (RedisAttempt) -> Void,
         onLost: @escaping (RedisAttempt, String) -> Void) {
        let ready = { [weak self] () -> Void in
            guard let self, self.isCurrent else { return }
            self.readyLinks += 1
            if self.readyLinks == 2 { onBothReady(self) }
        }
        let lost = { [weak self] (reason: String) -> Void in
            guard let self, self.isCurrent else { return }
            onLost(self, reason)
        }
        links = (connector(ready, lost), connector(ready, lost))
    }

    /// The command link, for what must hear its nil replies even after a
    /// retirement (change rounds, history reads); nil once retired.
    var commandLink: (any RedisLink)? { isCurrent ? links?.commands : nil }

    /// Sends a command whose answer matters only to this attempt: `then`
    /// runs with the reply (nil when the link ended first) while the
    /// attempt is current, and not at all after it was retired.
    func ask(_ arguments: [[UInt8]], then: @escaping (RedisReply?) -> Void) {
        guard isCurrent, let commands = links?.commands else { return }
        commands.send(arguments) { [weak self] reply in
            guard let self, self.isCurrent else { return }
            then(reply)
        }
    }

    /// The same, with text arguments.
    func ask(_ arguments: [String], then: @escaping (RedisReply?) -> Void) {
        ask(arguments.map { Array($0.utf8) }, then: then)
    }

    /// Subscribes the listening link; pushes arrive while the attempt is current.
    func subscribe(_ channels: [String], onPush: @escaping (RedisReply) -> Void) {
        guard isCurrent, let subscriber = links?.subscriber else { return }
        subscriber.subscribe(channels) { [weak self] reply in
            guard let self, self.isCurrent else { return }
            onPush(reply)
        }
    }

    /// Gives the attempt up: its guarded callbacks stop, and both links
    /// close (the command link answering what it holds with nil).
    func retire() {
        guard isCurrent else { return }
        isCurrent = false
        let old = links
        links = nil
        old?.commands.close()
        old?.subscriber.close()
    }
}
