/// The objects of a fetch, made a batch at a time as they are used (Core Data's batch-faulting
/// array, the `_PFBatchFaultingArray` that a fetch with a `fetchBatchSize` returns).
///
/// ```swift
/// var request = FetchRequest(entityName: "Item", sortKeys: [SortKey("name")])
/// request.fetchBatchSize = 500
/// let items = try context.fetchBatchFaulting(request)
/// items.count                              // known at once: the fetch read the matching IDs
/// for item in items { total += item["score"] as Double? ?? 0 }
/// ```
///
/// The fetch reads only the IDs of the matching objects, in the fetch's order, and keeps them
/// compactly (about 8 bytes an object). Reading an element makes the objects of its batch
/// (``fetchBatchSize`` positions) and loads their values in one call to the store; the array then
/// keeps that batch and the one before it, and lets earlier batches go. The context keeps an
/// object only while something holds it or it has unsaved changes (unless
/// ``ManagedObjectContext/retainsRegisteredObjects`` is set), and the rows a batch reads from the
/// store stay with its objects instead of entering the coordinator's row cache (a walk through
/// a million rows would otherwise push out every row other work had cached, and keep the cache
/// full), so walking a million objects needs memory for a few batches, not for a million objects.
///
/// - **Same objects.** Objects are uniqued as everywhere else: an element is the context's
///   registered object for its ID, so an object changed and let go by the array comes back, with
///   its changes, when its batch is read again.
/// - **A fixed answer.** Which objects the array holds, and their order, are fixed when it is
///   fetched, as for ``ManagedObjectContext/fetch(_:)`` (which gives the same objects in the
///   same order): objects inserted later are not added, and objects deleted later stay in it.
///   Unsaved changes count when ``FetchRequest/includesPendingChanges`` is set, as for `fetch(_:)`.
/// - **Errors.** A batch that cannot be read (a store error) leaves its objects as faults; using
///   one then behaves as using any fault that cannot load (see ``ManagedObject/fulfillFault()``).
///   With ``FetchRequest/includesPropertyValues`` `false`, elements stay faults until used, and
///   the faults of one batch load together.
///
/// Thread safety: not `Sendable`; use it on its context's executor, like its objects.
public struct BatchFaultingArray<Element: ManagedObject>: RandomAccessCollection {
    let storage: BatchFaultingStorage

    init(storage: BatchFaultingStorage) { self.storage = storage }

    /// The first position, 0.
    public var startIndex: Int { 0 }
    /// The number of objects.
    public var endIndex: Int { storage.ids.count }

    /// The object at `position`, its batch made and loaded if it is not yet.
    ///
    /// - Complexity: O(1) within the batches held; otherwise one call to the store for the
    ///   batch's rows.
    public subscript(position: Int) -> Element {
        // unsafeDowncast: every position holds an object of Element's class or a subclass (the
        // fetch kept only positions whose entity's class is one, and an ID's object always has
        // its entity's class).
        unsafeDowncast(storage.object(at: position), to: Element.self)
    }

    /// The number of positions each batch holds (the request's ``FetchRequest/fetchBatchSize``,
    /// or every position when it was 0).
    public var fetchBatchSize: Int { storage.batchSize }

    /// The ID of the object at `position`, without making or loading the object.
    public func objectID(at position: Int) -> ManagedObjectID { storage.objectID(at: position) }
}

/// The state behind a ``BatchFaultingArray``: the IDs, the objects the array holds itself
/// (unsaved ones, whose IDs change when they are saved), and the batches made so far.
final class BatchFaultingStorage {
    let context: ManagedObjectContext
    let ids: CompactRowIDs
    /// Objects at their positions that the array holds for its whole life: objects with
    /// temporary IDs (inserted, or a child's copies of its parent's inserts).
    let held: [Int: ManagedObject]
    let batchSize: Int
    /// Whether a batch's values are loaded when it is made (``FetchRequest/includesPropertyValues``).
    let loadsValues: Bool
    /// Relationship key paths prefetched for each batch as it loads.
    let prefetching: [String]
    /// The batch read last, and the one before it.
    private var current: (batch: Int, objects: [ManagedObject])?
    private var previous: (batch: Int, objects: [ManagedObject])?

    init(
        context: ManagedObjectContext, ids: CompactRowIDs, held: [Int: ManagedObject], batchSize: Int,
        loadsValues: Bool, prefetching: [String]
    ) {
        self.context = context
        self.ids = ids
        self.held = held
        self.batchSize = batchSize > 0 ? batchSize : max(ids.count, 1)
        self.loadsValues = loadsValues
        self.prefetching = prefetching
    }

    func objectID(at position: Int) -> ManagedObjectID {
        // Misuse no valid program commits: a position outside the array, as with Array.
        precondition(position >= 0 && position < ids.count, "index \(position) is out of range 0..<\(ids.count)")
        if let object = held[position] { return object.objectID }
        let (row, store) = ids[position]
        // Positions not held are saved rows of stores of this context's model.
        return context.anchors.id(context.coordinator.managedObjectModel.entity(number: row.entity)!, row, store)
    }

    func object(at position: Int) -> ManagedObject {
        // Misuse no valid program commits: a position outside the array, as with Array.
        precondition(position >= 0 && position < ids.count, "index \(position) is out of range 0..<\(ids.count)")
        let batch = position / batchSize
        let offset = position - batch * batchSize
        if let current, current.batch == batch, current.objects[offset].isIn(context) {
            return current.objects[offset]
        }
        if let held = previous, held.batch == batch, held.objects[offset].isIn(context) {
            previous = current
            current = held
            return held.objects[offset]
        }
        let objects = makeBatch(batch)
        if loadsValues {
            // fireFault keeps a store error with the context and leaves the object a fault, as
            // any property read does; after a failure the rest of the batch waits for its use.
            for object in objects where object.faulted {
                object.fireFault()
                if object.faulted { break }
            }
        }
        return objects[offset]
    }

    /// The number of batches.
    var batchCount: Int { (ids.count + batchSize - 1) / batchSize }

    /// The objects of `batch`, made again and loaded (unless values are not wanted), throwing
    /// the store's error where reading the array by position leaves it with the context; the
    /// batch becomes the current one.
    func loadedBatch(_ batch: Int) throws -> [ManagedObject] {
        let objects = makeBatch(batch)
        if loadsValues {
            for object in objects where object.faulted { try object.fireFaultThrowing() }
        }
        return objects
    }

    /// Makes (and, unless values are not wanted, loads) the objects of `batch`, and keeps them as
    /// the current batch; the batch before the current one is let go first, so the context's
    /// sweep can free its objects.
    private func makeBatch(_ batch: Int) -> [ManagedObject] {
        context.checkConfinement("BatchFaultingArray: reading batch \(batch)")
        previous = current
        current = nil
        context.sweepIfGrown()
        let start = batch * batchSize
        let end = min(start + batchSize, ids.count)
        let model = context.coordinator.managedObjectModel
        var objects: [ManagedObject] = []
        objects.reserveCapacity(end - start)
        var faults: [ManagedObject] = []
        for position in start..<end {
            if let object = held[position] {
                objects.append(object)
                continue
            }
            let (row, store) = ids[position]
            // Positions not held are saved rows of stores of this context's model.
            let id = context.anchors.id(model.entity(number: row.entity)!, row, store)
            let object = context.fault(for: id)
            objects.append(object)
            if object.faulted && !object.hasSnapshot { faults.append(object) }
        }
        if !faults.isEmpty {
            // One fault batch: the first fault to fire loads the rows of all of them.
            let group = FaultBatch(
                ids: faults.map { $0.objectID }, size: faults.count, prefetching: prefetching, cachesRows: false)
            for fault in faults { context.faultBatches[ObjectIdentifier(fault)] = group }
        }
        current = (batch, objects)
        return objects
    }
}
