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
    /// Named per version of its arguments: a daemon of an older version
    /// beside newer ones keeps calling its own function (and loses its
    /// races, never corrupting), instead of replacing theirs.
    static let library = "navsync_v2"
    static let name = "navsync_change_v2"

    static let source = """
        #!lua name=navsync_v2
        -- KEYS: room state hash, room history stream, fleet room set, fleet epoch
        -- ARGV: epoch, room, expected rev, expected tag ('*' = any), new route
        --       ('' = report only), op, new rev, new tag, history length,
        --       max rooms, changes channel
        local function change(keys, args)
          if redis.call('GET', keys[4]) ~= args[1] then
            return {'epoch'}
          end
          local held = redis.call('HMGET', keys[1], 'rev', 'route', 'tag')
          local rev = held[1] or '0'
          local route = held[2] or ''
          local tag = held[3] or ''
          if rev ~= args[3] or (args[4] ~= '*' and tag ~= args[4]) then
            return {'moved', rev, route, tag}
          end
          if args[5] == '' then
            return {'same', rev, route, tag}
          end
          if rev == '0' and redis.call('SISMEMBER', keys[3], args[2]) == 0
             and redis.call('SCARD', keys[3]) >= tonumber(args[10]) then
            return {'full', rev, route, tag}
          end
          redis.call('XADD', keys[2], 'MAXLEN', '~', args[9], args[7] .. '-0',
                     'op', args[6], 'route', args[5], 'tag', args[8])
          redis.call('HSET', keys[1], 'rev', args[7], 'route', args[5], 'tag', args[8])
          redis.call('SADD', keys[3], args[2])
          redis.call('PUBLISH', args[11], args[1] .. ' ' .. args[2] .. ' ' .. args[7] .. ' '
                     .. args[8] .. ' ' .. args[6] .. ' ' .. args[5])
          return {'applied', args[7], args[5]}
        end
        redis.register_function('navsync_change_v2', change)
        """

    /// What a change expects to find: the room's revision and the tag of the
    /// change that made it. The revision alone is not enough once changes
    /// pipeline: a change judged against the state another change of this
    /// daemon *will* produce must not land on the same revision made by
    /// someone else.
    struct Precondition: Equatable {
        var revision: UInt64
        /// `*`: any tag (an `IF` compares revisions only).
        var tag: String

        static func exactly(_ revision: UInt64) -> Precondition { Precondition(revision: revision, tag: "*") }
    }

    /// The `FCALL` for one room: `route` nil only reports the state.
    static func call(keys: BackplaneKeys, epoch: String, room: String, expected: Precondition,
                     route: String?, tag: String, op: String, historyLength: Int, maxRooms: Int) -> [String] {
        ["FCALL", name, "4", keys.state(room), keys.history(room), keys.rooms, keys.epoch,
         epoch, room, String(expected.revision), expected.tag, route ?? "", op, String(expected.revision + 1), tag,
         String(historyLength), String(maxRooms), keys.changesChannel]
    }

    /// What the function answered.
    enum Answer: Equatable {
        case applied(revision: UInt64)
        /// The room is at this revision and route (empty route: never changed),
        /// made by the change with this tag; `matched` tells whether that was expected.
        case state(revision: UInt64, route: String, tag: String, matched: Bool)
        case roomLimit
        case epochChanged

        init?(_ reply: RedisReply?) {
            guard let parts = reply?.elements, let tag = parts.first?.text else { return nil }
            switch tag {
            case "applied":
                guard parts.count == 3, let rev = parts[1].unsigned else { return nil }
                self = .applied(revision: rev)
            case "moved", "same":
                guard parts.count == 4, let rev = parts[1].unsigned, let route = parts[2].text,
                      let madeBy = parts[3].text else { return nil }
                self = .state(revision: rev, route: route, tag: madeBy, matched: tag == "same")
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
