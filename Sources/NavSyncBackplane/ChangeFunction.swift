/// The one step in Redis per round of a room's changes: a Redis function,
/// loaded at every (re)connection with `FUNCTION LOAD REPLACE` and called
/// with `FCALL`, that checks the room's revision (and the tag of the change
/// that made it), then for each change of the round in order appends the
/// event to the room's history stream and publishes it, stores the room's
/// new state, and trims the stream to about `--history` entries and
/// `--history-bytes` — all or nothing, because Redis runs a function without
/// interleaving anything else. With no change it only reports the room's
/// state (a read checked against the same precondition).
///
/// A round is one call, not one call per change: Redis then reads a
/// client's burst in one go, and fsyncs (`appendfsync always`) and sends
/// its events to every daemon together, so each daemon writes the burst to
/// its watchers in one write each.
///
/// It touches the room's two keys only, both under the room's hash tag, so
/// Redis Cluster could run it on the node holding the room. The fleet-wide
/// room count (`--max-rooms`) is a second, small function on the fleet's
/// room set (`admit`), called before a room's first change.
///
/// The first history entry is appended first: it is the only step that can
/// fail (an id below the stream's last; the later entries' ids are above
/// it), and a failed function must leave nothing changed.
///
/// Revisions never become Lua numbers (doubles, exact only up to 2^53):
/// the function compares the stored revision with the expected one as text
/// and stores the revisions the daemon computed, so a huge revision in Redis
/// can only fail to match, never be rounded into another one. What it
/// answers is checked again on the daemon's side (`StoredRevision`).
enum ChangeFunction {
    /// Named per version of its arguments: a daemon of an older version
    /// beside newer ones keeps calling its own function, instead of
    /// replacing theirs.
    static let library = "navsync_v4"
    static let name = "navsync_change_v4"
    static let admitName = "navsync_admit_v4"

    static let source = """
        #!lua name=navsync_v4
        -- change: KEYS: room state hash, room history stream (one hash tag)
        -- ARGV: epoch, room, expected rev, expected tag ('*' = any), history
        --       length, changes channel, history bytes, then for each change
        --       of the round in order: new rev, op, new route, new tag
        --       (no change: report only)
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
          if #args < 11 then
            return {'same', rev, route, tag}
          end
          local added = 0
          for i = 8, #args - 3, 4 do
            redis.call('XADD', keys[2], args[i] .. '-0', 'op', args[i + 1], 'route', args[i + 2], 'tag', args[i + 3])
            added = added + #args[i + 1] + #args[i + 2] + #args[i + 3]
            redis.call('PUBLISH', args[6], args[1] .. ' ' .. args[2] .. ' ' .. args[i] .. ' '
                       .. args[i + 3] .. ' ' .. args[i + 1] .. ' ' .. args[i + 2])
          end
          local last = #args - 3
          redis.call('HSET', keys[1], 'rev', args[last], 'route', args[last + 2], 'tag', args[last + 3])
          redis.call('HINCRBY', keys[1], 'hbytes', added)
          trim(keys, tonumber(args[5]), tonumber(args[7]))
          return {'applied', args[last]}
        end
        -- admit: KEYS: the fleet's room set; ARGV: room, max rooms.
        -- 'known' or 'added' (the room may hold state), or 'full'.
        local function admit(keys, args)
          if redis.call('SISMEMBER', keys[1], args[1]) == 1 then return 'known' end
          if redis.call('SCARD', keys[1]) >= tonumber(args[2]) then return 'full' end
          redis.call('SADD', keys[1], args[1])
          return 'added'
        end
        redis.register_function('navsync_change_v4', change)
        redis.register_function('navsync_admit_v4', admit)
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

    /// One change of a round: the route it makes, its op and its tag; its
    /// revision is the one after the change before it.
    struct Step: Equatable {
        var route: String
        var op: String
        var tag: String
    }

    /// The `FCALL` for one round of a room's changes, in order, each
    /// judged against the state the one before it makes; no change only
    /// reports the room's state.
    static func call(keys: BackplaneKeys, epoch: String, room: String, expected: Precondition,
                     steps: [Step], history: HistoryBounds) -> [String] {
        var call = ["FCALL", name, "2", keys.state(room), keys.history(room),
                    epoch, room, String(expected.revision), expected.tag,
                    String(history.count), keys.changesChannel, String(history.bytes)]
        call.reserveCapacity(call.count + 4 * steps.count)
        for (index, step) in steps.enumerated() {
            call += [String(expected.revision + UInt64(index) + 1), step.op, step.route, step.tag]
        }
        return call
    }

    /// The `FCALL` that counts a room into the fleet's room set, or says the set is full.
    static func admitCall(keys: BackplaneKeys, room: String, maxRooms: Int) -> [String] {
        ["FCALL", admitName, "1", keys.rooms, room, String(maxRooms)]
    }

    /// What the function answered.
    enum Answer: Equatable {
        /// Every change of the round is in; the last made this revision.
        case applied(revision: UInt64)
        /// The room is at this revision and route (empty route: never changed),
        /// made by the change with this tag; `matched` tells whether that was expected.
        case state(revision: UInt64, route: String, tag: String, matched: Bool)

        init?(_ reply: RedisReply?) {
            guard let parts = reply?.elements, let tag = parts.first?.text else { return nil }
            switch tag {
            case "applied":
                guard parts.count == 2, let rev = StoredRevision.parse(field: parts[1]) else { return nil }
                self = .applied(revision: rev)
            case "moved", "same":
                guard parts.count == 4, let rev = StoredRevision.parse(field: parts[1]), let route = parts[2].text,
                      let madeBy = parts[3].text else { return nil }
                self = .state(revision: rev, route: route, tag: madeBy, matched: tag == "same")
            default:
                return nil
            }
        }
    }
}

import RedisClient
