import NavSyncCore

extension AccessPolicy {
    /// What an HTTP request's Bearer token (nil: none sent) comes to for a
    /// peer. On a daemon without tokens any request holds the anonymous
    /// role, a token or not. A failure is counted and logged here under
    /// `label`; from a throttled address the token is not checked.
    public func credential(bearer token: String?, from address: PeerAddress, label: String) -> Credential {
        guard let token, hasTokens else {
            return anonymous.role == .none ? .missing : .granted(anonymous)
        }
        switch check(token: token, from: address) {
        case .granted(let grant):
            return .granted(grant)
        case .guess:
            noteFailure("wrong Bearer token", peer: label)
            return .wrong
        case .refused(let why):
            noteFailure("\(why) on a Bearer header", peer: label)
            return .refused(why)
        case .throttled(let seconds):
            noteFailure("Bearer throttled", peer: label, throttled: true)
            return .throttled(retryAfterSeconds: seconds)
        }
    }
}
