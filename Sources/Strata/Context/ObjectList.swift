/// A context's list of inserted, updated or deleted objects: insertion-ordered, with membership
/// kept as a bit on each object, so adding, testing and removing cost no hashing.
///
/// Removed objects stay in the backing array until the next read of ``values``, which skips them.
struct ObjectList {
    /// Which bit of ``ManagedObject/listMembership`` this list owns.
    struct Kind: Sendable {
        let bit: UInt8
        static let inserted = Kind(bit: 1)
        static let updated = Kind(bit: 2)
        static let deleted = Kind(bit: 4)
    }

    /// A bit of ``ManagedObject/listMembership`` the deleted list keeps beside its own: the
    /// context applied the object's delete rules for this deletion. Cleared whenever the object
    /// enters or leaves the deleted list, so it never outlives the deletion it belongs to.
    static let deleteRulesAppliedBit: UInt8 = 8

    private let kind: Kind
    private var members: [ManagedObject] = []
    private(set) var count = 0

    init(_ kind: Kind) { self.kind = kind }

    var isEmpty: Bool { count == 0 }

    /// The members, in the order they were first added.
    var values: [ManagedObject] {
        members.count == count ? members : members.filter { contains($0) }
    }

    func contains(_ object: ManagedObject) -> Bool { object.listMembership & kind.bit != 0 }

    mutating func insert(_ object: ManagedObject) {
        guard !contains(object) else { return }
        // Drop removed members first, so a re-added object is listed once.
        if members.count != count { members = members.filter { contains($0) } }
        object.listMembership |= kind.bit
        if kind.bit == Kind.deleted.bit { object.listMembership &= ~Self.deleteRulesAppliedBit }
        members.append(object)
        count += 1
    }

    /// Adds `objects`, in order, none of them a member already (objects just made): one append
    /// for the batch instead of a call per object. With `bitsSet`, the caller already set this
    /// list's bit on each as it made them (and this is not the deleted list).
    mutating func insertNew(_ objects: __owned [ManagedObject], bitsSet: Bool = false) {
        if members.count != count { members = members.filter { contains($0) } }
        if bitsSet {
            assert(kind.bit != Kind.deleted.bit && objects.allSatisfy(contains), "insertNew(_:bitsSet:) without bits")
        } else {
            for object in objects {
                assert(!contains(object), "insertNew(_:) of a member")
                object.listMembership |= kind.bit
                if kind.bit == Kind.deleted.bit { object.listMembership &= ~Self.deleteRulesAppliedBit }
            }
        }
        if members.isEmpty {
            // Taken whole: no copy, and no retain and release of every member.
            members = objects
        } else {
            members.append(contentsOf: objects)
        }
        count += objects.count
    }

    mutating func remove(_ object: ManagedObject) {
        guard contains(object) else { return }
        object.listMembership &= ~kind.bit
        if kind.bit == Kind.deleted.bit { object.listMembership &= ~Self.deleteRulesAppliedBit }
        count -= 1
        if count == 0 { members.removeAll() }
    }

    /// Forgets every member whose membership bit the caller already cleared (it visited each
    /// member anyway); members whose bit is still set have it cleared here.
    mutating func removeAll(bitsCleared: Bool) {
        guard bitsCleared else { return removeAll() }
        members.removeAll()
        count = 0
    }

    mutating func removeAll() {
        let bits = kind.bit == Kind.deleted.bit ? kind.bit | Self.deleteRulesAppliedBit : kind.bit
        for object in members { object.listMembership &= ~bits }
        members.removeAll()
        count = 0
    }
}
