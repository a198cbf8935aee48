/// A room's member changes in Redis, as one Redis function call per
/// room and turn: each member written or deleted in the room's members
/// hash, in order, then the room's entry in the fleet's set of rooms with
/// members made to agree with the hash — added while the hash holds
/// anyone, removed once it is empty (Redis deletes an empty hash by
/// itself). Redis runs a function without interleaving anything else, so
/// a member another daemon adds at the moment the last one here leaves
/// either lands before the check (and the entry stays) or after it (and
/// its own call adds the entry back): the set never lacks a room that has
/// members, and loses every room that has none.
///
/// Called with no change, it only tidies: a room left in the set with no
/// members (by a daemon that died, or one of 1.2, which never removed
/// entries) leaves it. A daemon that finds another one dead deletes that
/// daemon's members the same way.
///
/// It is a library of its own beside the change function's, so either can
/// move to a new version without the other.
enum MembersFunction {
    static let library = "navsync_presence_v1"
    static let name = "navsync_members_v1"

    static let source = """
        #!lua name=navsync_presence_v1
        -- members: KEYS: the room's members hash, the fleet's set of rooms with members
        -- ARGV: room, then for each change in order: 'M', id, '<name> <role> <at>'
        --       or 'G', id, '' (no change: only the set entry is put right)
        -- Answers the members the room holds after the changes.
        local function members(keys, args)
          for i = 2, #args - 2, 3 do
            if args[i] == 'M' then
              redis.call('HSET', keys[1], args[i + 1], args[i + 2])
            else
              redis.call('HDEL', keys[1], args[i + 1])
            end
          end
          local left = redis.call('HLEN', keys[1])
          if left == 0 then
            redis.call('SREM', keys[2], args[1])
          else
            redis.call('SADD', keys[2], args[1])
          end
          return left
        end
        redis.register_function('navsync_members_v1', members)
        """

    /// The `FCALL` that applies `changes` (all of `room`), in order.
    static func call(keys: BackplaneKeys, room: String, changes: [PresenceMessage]) -> [String] {
        var call = ["FCALL", name, "2", keys.members(room), keys.presenceRooms, room]
        call.reserveCapacity(call.count + 3 * changes.count)
        for change in changes {
            switch change {
            case .member(_, let member): call += ["M", member.id, PresenceMessage.hashValue(member)]
            case .gone(_, let id): call += ["G", id, ""]
            }
        }
        return call
    }

    /// The members of `ids` leave `room` (their daemon is dead, or they
    /// were found without one).
    static func remove(keys: BackplaneKeys, room: String, ids: [String]) -> [String] {
        call(keys: keys, room: room, changes: ids.map { .gone(room: room, id: $0) })
    }
}
