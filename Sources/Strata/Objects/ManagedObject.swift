import Foundation

/// An object of an entity, registered in a context: uniqued per object ID, faulting, change-tracked.
///
/// Read and write properties by key (``value(forKey:)``, ``setValue(_:forKey:)``, the subscript)
/// or through a typed subclass whose properties use ``ManagedAttribute``, ``ManagedToOne``,
/// ``ManagedToMany`` and ``ManagedOrderedToMany``. Values live in one contiguous buffer indexed
/// by property slot. Relationship changes keep the inverse side consistent at once.
///
/// Thread safety: not `Sendable`. Use an object only on its context's executor (inside
/// ``ManagedObjectContext/perform(_:)`` or ``ManagedObjectContext/performAndWait(_:)``, or from the
/// one thread that owns the context); pass ``objectID`` between threads instead.
open class ManagedObject: Hashable, CustomStringConvertible {
    /// The object's entity (its ID's: the object keeps no second reference, which would cost
    /// 8 bytes and a retain and release per object).
    @inlinable public var entity: EntityDescription { objectID.entity }
    // `@exclusivity(unchecked)` on the stored state below: the runtime's per-access exclusivity
    // checks cost about 6% of the object layer's time (docs/benchmarks.md). It is safe because no
    // access to these properties overlaps another to the same property: they are only read or
    // assigned in place by the context and the object on the context's thread (objects are not
    // thread-safe, like Core Data's), no code passes them `inout` or iterates one in place while
    // calling out, and user hooks (willSave, awakeFromFetch, validation) run outside any access.
    /// The object's identity; temporary until the first save.
    @exclusivity(unchecked) public internal(set) final var objectID: ManagedObjectID
    /// The context the object is registered in; `nil` once it leaves it (deleted and saved,
    /// rolled back, reset) or the context is gone.
    public internal(set) var managedObjectContext: ManagedObjectContext? {
        get { context }
        set { context = newValue }
    }
    // Unmanaged (unowned(unsafe)) instead of weak: a weak reference costs a side-table update per
    // object, which dominated creating and freeing objects in bulk. It never dangles: a context
    // sets it only while it registers the object (holding the object strongly), and clears it
    // whenever the object leaves (unregistration on save of a deletion, rollback, reset, sweeps)
    // and for every registered object in its deinit.
    @exclusivity(unchecked) final var contextReference: Unmanaged<ManagedObjectContext>?

    /// The context, retained for the caller's use (see ``contextReference``).
    var context: ManagedObjectContext? {
        get { contextReference?.takeUnretainedValue() }
        set { contextReference = newValue.map(Unmanaged.passUnretained) }
    }

    /// Whether the object is registered in `owner`, compared without retaining either context
    /// (retaining a context someone holds weakly takes the runtime's slow path).
    @inline(__always) func isIn(_ owner: ManagedObjectContext) -> Bool {
        contextReference?.toOpaque() == Unmanaged.passUnretained(owner).toOpaque()
    }

    /// Current values, one per property slot; empty while the object is a fault.
    @exclusivity(unchecked) final var values: [StoreValue]
    /// The values of the last saved row (see ``snapshot``).
    @exclusivity(unchecked) private final var snapshotValues: [StoreValue]?
    /// The version of the last saved row (see ``snapshot``).
    @exclusivity(unchecked) private final var snapshotVersion: RowVersion = 0
    /// The flags below and the changed slots, in one word (see ``ObjectState``).
    // `@exclusivity(unchecked)`: safe for the reasons given above `objectID`; every access is a
    // read or a single read-modify-write of the word on the context's thread, nothing is called
    // while it is held (the side table `WideSlots` is reached before or after, never inside), and
    // ThreadSanitizer ran clean over the setter, SlotSet and concurrency-stress tests with it.
    @exclusivity(unchecked) final var state = ObjectState()

    /// Slots changed since the last save. The hot paths use ``markSlotChanged(_:)``,
    /// ``hasChangedSlots``, ``isSlotChanged(_:)`` and ``clearChangedSlots()``, which read the
    /// word alone.
    final var changedSlots: SlotSet {
        get {
            state.has(ObjectState.wideBit)
                ? WideSlots.slots(of: ObjectIdentifier(self)) : SlotSet(bits: state.raw & ObjectState.slotMask)
        }
        set {
            if let bits = newValue.bits(below: ObjectState.inlineSlots) {
                if state.has(ObjectState.wideBit) { WideSlots.remove(ObjectIdentifier(self)) }
                state.raw = state.raw & ~(ObjectState.slotMask | ObjectState.wideBit) | bits
            } else {
                WideSlots.set(newValue, of: ObjectIdentifier(self))
                state.raw = state.raw & ~ObjectState.slotMask | ObjectState.wideBit
            }
        }
    }

    /// Marks `slot` changed.
    @inline(__always) final func markSlotChanged(_ slot: Int) {
        if slot < ObjectState.inlineSlots && !state.has(ObjectState.wideBit) {
            state.raw |= 1 << UInt64(slot)
        } else {
            // The first slot past 53 moves the word's slots into the side table with it.
            let inline = state.has(ObjectState.wideBit) ? 0 : state.raw & ObjectState.slotMask
            WideSlots.insert(slot, of: ObjectIdentifier(self), inline: inline)
            state.raw = state.raw & ~ObjectState.slotMask | ObjectState.wideBit
        }
    }

    /// Whether any slot is marked changed.
    @inline(__always) final var hasChangedSlots: Bool { !state.hasNoChangedSlots }

    /// Whether `slot` is marked changed.
    @inline(__always) final func isSlotChanged(_ slot: Int) -> Bool {
        state.has(ObjectState.wideBit)
            ? WideSlots.contains(slot, of: ObjectIdentifier(self))
            : slot < ObjectState.inlineSlots && state.raw & 1 << UInt64(slot) != 0
    }

    /// Marks no slot changed.
    @inline(__always) final func clearChangedSlots() {
        if state.has(ObjectState.wideBit) { WideSlots.remove(ObjectIdentifier(self)) }
        state.raw &= ~(ObjectState.slotMask | ObjectState.wideBit)
    }

    final var faulted: Bool {
        get { state[.faulted] }
        set { state[.faulted] = newValue }
    }
    final var inserted: Bool {
        get { state[.inserted] }
        set { state[.inserted] = newValue }
    }
    final var deleted: Bool {
        get { state[.deleted] }
        set { state[.deleted] = newValue }
    }
    /// Set when the object's row was found gone from its store (a fault fired after another
    /// context deleted it, an ID no store holds): its values read as `nil` and setters refuse it.
    final var inaccessible: Bool {
        get { state[.inaccessible] }
        set { state[.inaccessible] = newValue }
    }
    /// Whether the object is a fault, inaccessible or deleted: the states a setter checks, read
    /// in one test.
    @inline(__always) final var needsChangeCheck: Bool {
        state.raw & (ObjectState.faultedBit | ObjectState.inaccessibleBit | ObjectState.deletedBit) != 0
    }
    /// Which of its context's change lists hold the object (``ObjectList`` bits).
    final var listMembership: UInt8 {
        @inline(__always) get { state.listMembership }
        @inline(__always) set { state.listMembership = newValue }
    }

    /// Whether its context applied the object's delete rules for its current deletion (kept in
    /// ``listMembership``; see ``ObjectList/deleteRulesAppliedBit``).
    var deleteRulesApplied: Bool {
        get { listMembership & ObjectList.deleteRulesAppliedBit != 0 }
        set {
            if newValue {
                listMembership |= ObjectList.deleteRulesAppliedBit
            } else {
                listMembership &= ~ObjectList.deleteRulesAppliedBit
            }
        }
    }
    /// Whether the object holds a pin on its row in the row cache (owned by its context).
    private final var isPinned: Bool {
        get { state[.pinned] }
        set { state[.pinned] = newValue }
    }

    // The last saved row and the pinned row-cache key are always the object's own row (the
    // context sets them only for the object's ID, and an ID with a row has a store), so the
    // object keeps only what the ID does not already say: 40-odd bytes less per object, which
    // every pass over many objects reads.

    /// The last saved row, when the object came from (or was saved to) a store.
    var snapshot: RowSnapshot? {
        get { snapshotValues.map { RowSnapshot(id: objectID.rowID, version: snapshotVersion, values: $0) } }
        set {
            assert(newValue.map { $0.id == objectID.rowID } ?? true, "a snapshot of another row")
            snapshotValues = newValue?.values
            snapshotVersion = newValue?.version ?? 0
        }
    }

    /// Makes the current values the last saved row's, at `version` (``snapshot`` set to them,
    /// without a ``RowSnapshot`` made and taken apart on the way).
    @inline(__always) func takeValuesAsSnapshot(version: RowVersion) {
        snapshotValues = values
        snapshotVersion = version
    }

    /// Takes `row` as the last saved row and its values as the current ones, with the object's
    /// unsaved changes put back on top (a refresh that merges, a refetch that refreshes).
    func rebase(onto row: RowSnapshot) {
        let mine = changedSlots.map { ($0, values[$0]) }
        values = row.values
        snapshot = row
        for (slot, value) in mine { values[slot] = value }
    }

    /// Whether the object has a saved row (cheaper than reading ``snapshot``).
    var hasSnapshot: Bool { snapshotValues != nil }

    /// The version of the last saved row, `nil` without one: ``snapshot``'s version without
    /// touching its values (a save over many objects reads each one's version, and the saved
    /// values array, older than the current one, is no longer in the processor's caches).
    var snapshotVersionIfSaved: RowVersion? { snapshotValues == nil ? nil : snapshotVersion }

    /// The row-cache key this object holds a pin on, if any (owned by its context).
    var pinnedKey: RowCache.Key? {
        get {
            guard isPinned, let store = objectID.persistentStore else { return nil }
            return RowCache.Key(store: ObjectIdentifier(store), row: objectID.rowID)
        }
        set {
            assert(
                newValue.map { key in
                    objectID.persistentStore.map { ObjectIdentifier($0) == key.store && key.row == objectID.rowID }
                        ?? false
                } ?? true,
                "a pin on another row")
            isPinned = newValue != nil
        }
    }

    /// Creates an object of `entity` and, when a context is given, inserts it there
    /// (``awakeFromInsert()`` runs, defaults are applied).
    ///
    /// Subclasses that add stored properties must provide this initializer too.
    public required init(entity: EntityDescription, insertInto context: ManagedObjectContext?) {
        if let context, let id = context.takeRegisteringID() {
            // The context makes this object (of this class, not a subclass) for a row it
            // registers: the row's ID, and the values the context sets next.
            self.objectID = id
            self.values = []
            return
        }
        // Until inserted or registered, a placeholder ID; one made for a context shares the
        // context's anchor (``ObjectIDAnchor``) instead of allocating one.
        let placeholder = RowID(entity: entity.entityNumber, primaryKey: 0)
        self.objectID =
            context?.placeholderID(entity, placeholder)
            ?? ManagedObjectID(entity: entity, rowID: placeholder, store: nil)
        self.values = context != nil ? Self.insertedValues(entity) : entity.defaultValues
        if let context { context.insert(self) }
    }

    deinit {
        // A wide set's entry would otherwise be handed to the next object at this address.
        if state.has(ObjectState.wideBit) { WideSlots.remove(ObjectIdentifier(self)) }
    }

    /// The values a new object of `entity` starts with when it is inserted: its defaults, or,
    /// when they are all `nil`, an array of its own from the start (its values change right away,
    /// and a plain fill is cheaper than the first change copying the shared defaults one by one).
    static func insertedValues(_ entity: EntityDescription) -> [StoreValue] {
        guard entity.defaultValuesAreNull else { return entity.defaultValues }
        // Appending to a reserved array: `Array(repeating:count:)` looked up the storage type's
        // generic metadata in the runtime's table on every call.
        var nulls: [StoreValue] = []
        nulls.reserveCapacity(entity.defaultValues.count)
        for _ in entity.defaultValues.indices { nulls.append(.null) }
        return nulls
    }

    /// Creates an object of the entity whose registered class is this class, inserted into
    /// `context` (Core Data's `init(context:)`).
    public convenience init(context: ManagedObjectContext) {
        let model = context.coordinator.managedObjectModel
        guard let entity = model.entities.first(where: { $0.managedObjectClass == Self.self }) else {
            // Misuse no valid program commits: the class was never registered with the model.
            preconditionFailure(
                "no entity of the model uses class \(Self.self); register it with ManagedObjectModel.registering(_:)")
        }
        self.init(entity: entity, insertInto: context)
    }

    // MARK: State

    /// Whether the object's values have not been loaded yet.
    public var isFault: Bool { faulted }
    /// Whether the object was inserted and not yet saved.
    public var isInserted: Bool { inserted }
    /// Whether the object was deleted and the deletion not yet saved.
    public var isDeleted: Bool { deleted }
    /// Whether the object has unsaved value changes (and was not inserted or deleted).
    public var isUpdated: Bool { !inserted && !deleted && hasChangedSlots }
    /// Whether the object has any unsaved change.
    public var hasChanges: Bool { inserted || deleted || hasChangedSlots }
    /// Whether the object's row exists as far as its context knows: `false` once a fault fired
    /// and found its row gone from the store (deleted elsewhere), or for an ID no store holds.
    /// Such an object reads as `nil` and refuses changes (Core Data's inaccessible faults).
    public var isAccessible: Bool { !inaccessible }

    /// The changed properties and their new values (Core Data's `changedValues()`).
    public func changedValues() -> [String: Any] {
        var result: [String: Any] = [:]
        for slot in changedSlots.ascending {
            let name = entity.properties[slot].name
            // A value its transformer cannot read back is shown as NSNull, as value(forKey:) shows nil: no store error can reach here (ignored on purpose).
            result[name] = (try? convertOut(values[slot], slot: slot)) ?? NSNull()
        }
        return result
    }

    /// The last saved values of `keys` (every property when `nil`); empty for unsaved objects.
    public func committedValues(forKeys keys: [String]?) -> [String: Any] {
        guard let snapshot else { return [:] }
        var result: [String: Any] = [:]
        for (slot, property) in entity.properties.enumerated() where keys?.contains(property.name) ?? true {
            if property.isTransient { continue }
            // As in changedValues(): only a transformer error can reach here (ignored on purpose).
            result[property.name] = (try? convertOut(snapshot.values[slot], slot: slot)) ?? NSNull()
        }
        return result
    }

    // MARK: Lifecycle hooks

    /// Called once when the object is inserted; set initial values here.
    open func awakeFromInsert() {}
    /// Called when the object's values are loaded from a store.
    open func awakeFromFetch() {}
    /// Called before the object's changes are validated and saved.
    open func willSave() {}
    /// Called after the object's changes were saved.
    open func didSave() {}
    /// Called when the object is deleted, before delete rules run.
    open func prepareForDeletion() {}
    /// Validates an inserted object at save; throw to refuse the save.
    open func validateForInsert() throws {}
    /// Validates an updated object at save; throw to refuse the save.
    open func validateForUpdate() throws {}
    /// Validates a deleted object at save; throw to refuse the save.
    open func validateForDelete() throws {}

    // MARK: Identity

    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    open var description: String {
        let state = faulted ? "fault" : inserted ? "inserted" : deleted ? "deleted" : "saved"
        return "<\(entity.name) \(objectID) (\(state))>"
    }
}
