import Foundation

/// Permanent IDs: keys reserved from the stores for unsaved objects, before or during a save.
extension ManagedObjectContext {
    /// Gives `objects` permanent IDs now (Core Data's `obtainPermanentIDs(for:)`).
    public func obtainPermanentIDs(for objects: [ManagedObject]) throws {
        checkConfinement("obtainPermanentIDs(for:)")
        var none: InsertRows?
        try obtainPermanentIDs(for: objects, checked: false, collecting: &none)
    }

    /// ``obtainPermanentIDs(for:)``; `checked` when every object is known to be an unsaved object
    /// of this context (a save's inserts), which skips filtering them again.
    ///
    /// - Parameter rows: When given, each object's row is added to it as the object gets its key.
    /// - Returns: The stores the objects go to, in the order the list first uses them.
    @discardableResult
    func obtainPermanentIDs(
        for objects: [ManagedObject], checked: Bool, collecting rows: inout InsertRows?
    ) throws -> [PersistentStore] {
        defaultStores = [:]
        let pending = checked ? objects : objects.filter { $0.objectID.isTemporaryID && $0.isIn(self) }
        guard !pending.isEmpty else { return [] }
        // Objects grouped by (store, root), each group as runs of positions in `pending`: inserts
        // come in runs of one entity, and a run is extended without a lookup or a copy of the list.
        var groups: [(store: PersistentStore, root: EntityDescription, count: Int, runs: [Range<Int>])] = []
        var positions: [KeyGroup: Int] = [:]
        var last: (entity: ObjectIdentifier, store: ObjectIdentifier, position: Int, end: Int)?
        for index in pending.indices {
            let object = pending[index]
            guard object.objectID.isTemporaryID else { continue }  // given its key by an earlier call
            let entityID = object.entityIdentifier
            // Unsaved objects have no store yet; without assignments, the store is the entity's.
            if let current = last, current.entity == entityID, current.end == index, assignedStores.isEmpty {
                let runIndex = groups[current.position].runs.count - 1
                groups[current.position].runs[runIndex] = groups[current.position].runs[runIndex].lowerBound..<index + 1
                groups[current.position].count += 1
                last = (current.entity, current.store, current.position, index + 1)
                continue
            }
            let store = try targetStore(for: object)
            let storeID = ObjectIdentifier(store)
            let position: Int
            if let current = last, current.entity == entityID, current.store == storeID {
                position = current.position
            } else {
                // Every entity's root is in the model.
                let root = coordinator.managedObjectModel.entity(number: object.entity.rootEntityNumber)!
                let groupKey = KeyGroup(store: storeID, root: root.entityNumber)
                if let known = positions[groupKey] {
                    position = known
                } else {
                    position = groups.count
                    positions[groupKey] = position
                    groups.append((store, root, 0, []))
                }
            }
            groups[position].runs.append(index..<index + 1)
            groups[position].count += 1
            last = (entityID, storeID, position, index + 1)
        }
        // Old to new row IDs, for rewriting references; only objects of entities with
        // relationships hold references, so without them there is nothing to rewrite.
        let rewrites = registered.hasObjectsWithRelationships
        var mapping: [RowID: RowID] = [:]
        if rewrites { mapping.reserveCapacity(pending.count) }
        // Other contexts of the tree may hold these objects: they get the permanent IDs too.
        let propagates = parent != nil || !children.isEmpty
        var permanent: [RowID: ManagedObjectID] = [:]
        // Temporary entries are dropped after the keys are assigned (also when allocation throws
        // part way): all at once when every unsaved object got its key here (a save), else one
        // by one.
        var converted: [Int64] = []
        converted.reserveCapacity(pending.count)
        var failure: (any Error)?
        assigning: for group in groups.sorted(by: { $0.root.entityNumber < $1.root.entityNumber }) {
            let keys: ClosedRange<Int64>
            do {
                keys = try coordinator.allocatePrimaryKeys(for: group.root, count: group.count, in: group.store)
            } catch {
                failure = error
                break assigning
            }
            // A driver that hands out fewer keys than asked for (a damaged counter) would make
            // two objects share one.
            guard keys.count >= group.count else {
                failure = StoreError(
                    .corrupt,
                    "store \(group.store.displayName) handed out \(keys.count) keys for \(group.count) new \(group.root.name) objects; its key counter is damaged",
                    store: group.store.displayName)
                break assigning
            }
            var nextKey = keys.lowerBound
            for run in group.runs {
                // A run is of one entity and takes the next keys in order: room for it at once, and
                // its entity, ID anchor and transient slots looked up once, not per object.
                let entity = pending[run.lowerBound].entity
                let anchor = anchors.anchor(entity, group.store)
                let transientSlots = entity.transientSlots
                if run.count > 64 {
                    registered.reservePermanent(
                        store: group.store, entity: entity.entityNumber,
                        keys: nextKey...(nextKey + Int64(run.count) - 1), count: run.count)
                }
                for index in run {
                    let object = pending[index]
                    let key = nextKey
                    nextKey &+= 1  // wraps only past the last key of the range, which is never used
                    // The row ID only: copying the whole ID would retain its entity.
                    let old = object.objectID.rowID
                    guard old.isTemporary else { continue }  // listed twice: it has its key already
                    let new = ManagedObjectID(anchor: anchor, primaryKey: key)
                    converted.append(old.primaryKey)
                    register(object, as: new)
                    object.objectID = new
                    if rewrites { mapping[old] = new.rowID }
                    if propagates { permanent[old] = new }
                    if rows != nil {
                        rows!.add(object, values: Self.storedValues(object.values, transientSlots), to: group.store)
                    }
                }
            }
        }
        if converted.count == registered.temporaryCount {
            registered.removeAllTemporary()
        } else {
            for key in converted { registered.removeTemporary(key) }
        }
        if let failure { throw failure }
        rewriteReferences(mapping)
        if propagates { propagatePermanentIDs(permanent) }
        // Groups were made in list order.
        var stores: [PersistentStore] = []
        for group in groups where !stores.contains(where: { $0 === group.store }) { stores.append(group.store) }
        return stores
    }
}

/// A (store, inheritance root) pair: primary keys are allocated per pair.
private struct KeyGroup: Hashable {
    var store: ObjectIdentifier
    var root: Int32
}
