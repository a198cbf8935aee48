/// The one step in Redis per change: a Redis function, loaded at every
/// (re)connection with `FUNCTION LOAD REPLACE` and called with `FCALL`, that
/// checks the room's revision, appends the event to the room's history
/// stream (trimmed to about `--history` entries and `--history-bytes`),
/// stores the new state, and publishes the event — all or nothing, because
/// Redis runs a function without interleaving anything else. With an empty
/// new route it only reports the room's state (a read that is checked
/// against the same revision).
///
/// It touches the room's two keys only, both under the room's hash tag, so
/// Redis Cluster could run it on the node holding the room. The fleet-wide
/// room count (`--max-rooms`) is a second, small function on the fleet's
/// room set (`admit`), called before a room's first change.
///
/// The history entry is appended first: it is the only step that can fail
/// (an id below the stream's last), and a failed function must leave
/// nothing changed.
enum ChangeFunction {
    /// Named per version of its arguments: a daemon of an older version
    /// beside newer ones keeps calling its own function, instead of
    /// replacing theirs.
    static let library = "navsync_v3"
    static let name = "navsync_change_v3"
    static let admitName = "navsync_admit_v3"

    static let source = """
        #!lua name=navsync_v3
        -- change: KEYS: room state hash, room history stream (one hash tag)
        -- ARGV: epoch, room, expected rev, expected tag ('*' = any), new route
        --       ('' = report only), op, new rev, new tag, history length,
        --       changes channel, history bytes
        local function entry_bytes(fields)
          local n = 0
          for i = 2, #fields, 2 do n = n + #fields[i] end
          return n
        end
        -- Drops the oldest history entries while the stream holds more than
        -- `count` entries or `bytes` bytes (op, route and tag of each entry,
        -- summed in the state hash's `hbytes`); the newest always stays. It
        -- starts only past a slack of 1/16 and then trims in one go: entries
        -- trimmed one by one cost Redis a walk over the deleted ones each time.
        local function trim(keys, count, bytes)
          local length = redis.call('XLEN', keys[2])
          local held = tonumber(redis.call('HGET', keys[1], 'hbytes') or '0')
          if length <= count + math.floor(count / 16) and held <= bytes + math.floor(bytes / 16) then return end
          local want = math.max(length - count, 0) + 1
          if held > bytes then want = length end
          local oldest = redis.call('XRANGE', keys[2], '-', '+', 'COUNT', math.min(want, 256))
          local keep = 1
          while keep < #oldest and (length > count or held > bytes) do
            held = held - entry_bytes(oldest[keep][2])
            length = length - 1
            keep = keep + 1
          end
          if keep > 1 then
            redis.call('XTRIM', keys[2], 'MINID', oldest[keep][1])
            redis.call('HSET', keys[1], 'hbytes', math.max(held, 0))
          end
        end
        local function change(keys, args)
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
          redis.call('XADD', keys[2], args[7] .. '-0', 'op', args[6], 'route', args[5], 'tag', args[8])
          redis.call('HSET', keys[1], 'rev', args[7], 'route', args[5], 'tag', args[8])
          redis.call('HINCRBY', keys[1], 'hbytes', #args[6] + #args[5] + #args[8])
          trim(keys, tonumber(args[9]), tonumber(args[11]))
          redis.call('PUBLISH', args[10], args[1] .. ' ' .. args[2] .. ' ' .. args[7] .. ' '
                     .. args[8] .. ' ' .. args[6] .. ' ' .. args[5])
          return {'applied', args[7], args[5]}
        end
        -- admit: KEYS: the fleet's room set; ARGV: room, max rooms.
        -- 'known' or 'added' (the room may hold state), or 'full'.
        local function admit(keys, args)
          if redis.call('SISMEMBER', keys[1], args[1]) == 1 then return 'known' end
          if redis.call('SCARD', keys[1]) >= tonumber(args[2]) then return 'full' end
          redis.call('SADD', keys[1], args[1])
          return 'added'
        end
        redis.register_function('navsync_change_v3', change)
        redis.register_function('navsync_admit_v3', admit)
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

    /// How much of a room's history its stream keeps: about `--history`
    /// entries and `--history-bytes` (op, route and tag of each entry),
    /// whichever bound is reached first (trimmed when 1/16 over, back to the
    /// bounds); the newest entry always stays.
    struct HistoryBounds: Equatable, Sendable {
        var count: Int
        var bytes: Int
    }

    /// The `FCALL` for one room: `route` nil only reports the state.
    static func call(keys: BackplaneKeys, epoch: String, room: String, expected: Precondition,
                     route: String?, tag: String, op: String, history: HistoryBounds) -> [String] {
        ["FCALL", name, "2", keys.state(room), keys.history(room),
         epoch, room, String(expected.revision), expected.tag, route ?? "", op, String(expected.revision + 1), tag,
         String(history.count), keys.changesChannel, String(history.bytes)]
    }

    /// The `FCALL` that counts a room into the fleet's room set, or says the set is full.
    static func admitCall(keys: BackplaneKeys, room: String, maxRooms: Int) -> [String] {
        ["FCALL", admitName, "1", keys.rooms, room, String(maxRooms)]
    }

    /// What the function answered.
    enum Answer: Equatable {
        case applied(revision: UInt64)
        /// The room is at this revision and route (empty route: never changed),
        /// made by the change with this tag; `matched` tells whether that was expected.
        case state(revision: UInt64, route: String, tag: String, matched: Bool)

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
            default:
                return nil
            }
        }
    }
}

import RedisClient
