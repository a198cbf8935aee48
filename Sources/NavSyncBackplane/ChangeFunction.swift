/// The one step in Redis per change: a Redis function, loaded at every
/// (re)connection with `FUNCTION LOAD REPLACE` and called with `FCALL`, that
/// checks the fleet's epoch and the room's revision, appends the event to
/// the room's history stream (trimmed to about `--history` entries), stores
/// the new state, and publishes the event — all or nothing, because Redis
/// runs a function without interleaving anything else. With an empty new
/// route it only reports the room's state (a read that is checked against
/// the same revision).
///
/// The history entry is appended first: it is the only step that can fail
/// (an id below the stream's last), and a failed function must leave
/// nothing changed.
enum ChangeFunction {
    static let library = "navsync"
    static let name = "navsync_change"

    static let source = """
        #!lua name=navsync
        -- KEYS: room state hash, room history stream, fleet room set, fleet epoch
        -- ARGV: epoch, room, expected rev, new route ('' = report only), op,
        --       new rev, history length, max rooms, changes channel
        local function change(keys, args)
          if redis.call('GET', keys[4]) ~= args[1] then
            return {'epoch'}
          end
          local held = redis.call('HMGET', keys[1], 'rev', 'route')
          local rev = held[1] or '0'
          local route = held[2] or ''
          if rev ~= args[3] then
            return {'moved', rev, route}
          end
          if args[4] == '' then
            return {'same', rev, route}
          end
          if rev == '0' and redis.call('SISMEMBER', keys[3], args[2]) == 0
             and redis.call('SCARD', keys[3]) >= tonumber(args[8]) then
            return {'full', rev, route}
          end
          redis.call('XADD', keys[2], 'MAXLEN', '~', args[7], args[6] .. '-0', 'op', args[5], 'route', args[4])
          redis.call('HSET', keys[1], 'rev', args[6], 'route', args[4])
          redis.call('SADD', keys[3], args[2])
          redis.call('PUBLISH', args[9], args[1] .. ' ' .. args[2] .. ' ' .. args[6] .. ' ' .. args[5] .. ' ' .. args[4])
          return {'applied', args[6], args[4]}
        end
        redis.register_function('navsync_change', change)
        """

    /// The `FCALL` for one room: `route` nil only reports the state.
    static func call(keys: BackplaneKeys, epoch: String, room: String, expected: UInt64,
                     route: String?, op: String, historyLength: Int, maxRooms: Int) -> [String] {
        ["FCALL", name, "4", keys.state(room), keys.history(room), keys.rooms, keys.epoch,
         epoch, room, String(expected), route ?? "", op, String(expected + 1), String(historyLength),
         String(maxRooms), keys.changesChannel]
    }

    /// What the function answered.
    enum Answer: Equatable {
        case applied(revision: UInt64)
        /// The room is at this revision and route (empty route: never changed);
        /// `matched` tells whether that was the expected revision.
        case state(revision: UInt64, route: String, matched: Bool)
        case roomLimit
        case epochChanged

        init?(_ reply: RedisReply?) {
            guard let parts = reply?.elements, let tag = parts.first?.text else { return nil }
            switch tag {
            case "applied":
                guard parts.count == 3, let rev = parts[1].unsigned else { return nil }
                self = .applied(revision: rev)
            case "moved", "same":
                guard parts.count == 3, let rev = parts[1].unsigned, let route = parts[2].text else { return nil }
                self = .state(revision: rev, route: route, matched: tag == "same")
            case "full":
                self = .roomLimit
            case "epoch":
                self = .epochChanged
            default:
                return nil
            }
        }
    }
}

import RedisClient
