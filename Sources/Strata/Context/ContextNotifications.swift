import Foundation
import Synchronization

// Core Data's context notifications as typed Swift values: observers (closures called on the
// context's executor, never on another queue) and an AsyncSequence of Sendable events.
//
// Objects-did-change is posted by `processPendingChanges()`: at the end of every `perform` and
// `performAndWait` block, at the start of a save, after a merge, and when called directly (there is
// no run loop to end an event). Tracking what changed costs nothing while nobody observes it.

/// What changed among a context's objects since the last objects-did-change notification (Core
/// Data's `NSManagedObjectContextObjectsDidChange`).
///
/// Not `Sendable`: it holds the context's objects; observers receive it on the context's executor.
/// ``objectIDs`` carries the same changes as IDs for other threads.
public struct ObjectsDidChange {
    /// Objects inserted (or, after a merge, made known to the context).
    public var insertedObjects: Set<ManagedObject> = []
    /// Objects whose values changed.
    public var updatedObjects: Set<ManagedObject> = []
    /// Objects deleted (locally, or by a merged save).
    public var deletedObjects: Set<ManagedObject> = []
    /// Objects whose values were replaced by the store's (refresh, merge).
    public var refreshedObjects: Set<ManagedObject> = []
    /// Objects turned into faults with their changes dropped.
    public var invalidatedObjects: Set<ManagedObject> = []
    /// Whether every object was dropped (``ManagedObjectContext/reset()``).
    public var invalidatedAllObjects = false

    /// Whether nothing changed.
    public var isEmpty: Bool {
        insertedObjects.isEmpty && updatedObjects.isEmpty && deletedObjects.isEmpty && refreshedObjects.isEmpty
            && invalidatedObjects.isEmpty && !invalidatedAllObjects
    }

    /// The same changes as object IDs.
    public var objectIDs: ObjectIDChanges {
        ObjectIDChanges(
            inserted: Set(insertedObjects.map { $0.objectID }), updated: Set(updatedObjects.map { $0.objectID }),
            deleted: Set(deletedObjects.map { $0.objectID }), refreshed: Set(refreshedObjects.map { $0.objectID }),
            invalidated: Set(invalidatedObjects.map { $0.objectID }), invalidatedAll: invalidatedAllObjects)
    }
}

/// Changes to a context's objects, as IDs (`Sendable`): the payload of objects-did-change and
/// did-merge-changes events.
public struct ObjectIDChanges: Sendable, Hashable {
    /// IDs of inserted objects.
    public var inserted: Set<ManagedObjectID> = []
    /// IDs of updated objects.
    public var updated: Set<ManagedObjectID> = []
    /// IDs of deleted objects.
    public var deleted: Set<ManagedObjectID> = []
    /// IDs of refreshed objects.
    public var refreshed: Set<ManagedObjectID> = []
    /// IDs of invalidated objects.
    public var invalidated: Set<ManagedObjectID> = []
    /// Whether every object was invalidated.
    public var invalidatedAll = false

    /// Creates a change set.
    public init(
        inserted: Set<ManagedObjectID> = [], updated: Set<ManagedObjectID> = [], deleted: Set<ManagedObjectID> = [],
        refreshed: Set<ManagedObjectID> = [], invalidated: Set<ManagedObjectID> = [], invalidatedAll: Bool = false
    ) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.refreshed = refreshed
        self.invalidated = invalidated
        self.invalidatedAll = invalidatedAll
    }
}

/// What a save changed, as object IDs (Core Data's did-save and did-save-object-IDs
/// notifications); the input of ``ManagedObjectContext/mergeChanges(fromContextDidSave:)``.
public struct ContextDidSave: Sendable {
    /// IDs of inserted objects (permanent after a save to the stores; temporary after a child's save
    /// into its parent, unless obtained before).
    public var insertedObjectIDs: [ManagedObjectID]
    /// IDs of updated objects.
    public var updatedObjectIDs: [ManagedObjectID]
    /// IDs of deleted objects.
    public var deletedObjectIDs: [ManagedObjectID]

    /// Creates a record of a save.
    public init(
        insertedObjectIDs: [ManagedObjectID] = [], updatedObjectIDs: [ManagedObjectID] = [],
        deletedObjectIDs: [ManagedObjectID] = []
    ) {
        self.insertedObjectIDs = insertedObjectIDs
        self.updatedObjectIDs = updatedObjectIDs
        self.deletedObjectIDs = deletedObjectIDs
    }

    /// Whether the save changed nothing.
    public var isEmpty: Bool { insertedObjectIDs.isEmpty && updatedObjectIDs.isEmpty && deletedObjectIDs.isEmpty }
}

/// One notification of a context, for ``ManagedObjectContext/events()``.
public enum ContextEvent: Sendable, Hashable {
    /// Objects changed (``ObjectsDidChange``, as IDs).
    case objectsDidChange(ObjectIDChanges)
    /// A save is about to run (after delete rules, before validation).
    case willSave
    /// A save completed.
    case didSave(ContextDidSave)
    /// Changes saved elsewhere were merged into the context.
    case didMergeChanges(ObjectIDChanges)
}

extension ContextDidSave: Hashable {}

/// Identifies an observer, for ``ManagedObjectContext/removeObserver(_:)``.
public struct ObserverToken: Sendable, Hashable {
    let value: UInt64
}

/// A context's observers and event streams.
struct ContextObservers {
    var objectsDidChange: [(ObserverToken, (ObjectsDidChange) -> Void)] = []
    var willSave: [(ObserverToken, () -> Void)] = []
    var didSave: [(ObserverToken, (ContextDidSave) -> Void)] = []
    var didMergeChanges: [(ObserverToken, (ObjectIDChanges) -> Void)] = []
    var nextToken: UInt64 = 0

    mutating func token() -> ObserverToken {
        nextToken += 1
        return ObserverToken(value: nextToken)
    }

    mutating func remove(_ token: ObserverToken) {
        objectsDidChange.removeAll { $0.0 == token }
        willSave.removeAll { $0.0 == token }
        didSave.removeAll { $0.0 == token }
        didMergeChanges.removeAll { $0.0 == token }
    }
}

/// The continuations of a context's event streams; ended streams remove themselves from any thread.
final class EventStreams: Sendable {
    private let continuations = Locked<[UInt64: AsyncStream<ContextEvent>.Continuation]>([:])
    private let next = Atomic<UInt64>(0)
    /// Whether any stream is open (read on the context's executor before building an event).
    let count = Atomic<Int>(0)

    func make() -> AsyncStream<ContextEvent> {
        let key = next.wrappingAdd(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream<ContextEvent>.makeStream(bufferingPolicy: .unbounded)
        continuations.withLock { $0[key] = continuation }
        count.add(1, ordering: .relaxed)
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            if self.continuations.withLock({ $0.removeValue(forKey: key) }) != nil {
                self.count.subtract(1, ordering: .relaxed)
            }
        }
        return stream
    }

    func yield(_ event: ContextEvent) {
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.yield(event) }
    }

    func finishAll() {
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.finish() }
    }
}

/// Objects changed since the last objects-did-change notification (kept only while observed).
struct PendingObjectChanges {
    var inserted: [ObjectIdentifier: ManagedObject] = [:]
    var updated: [ObjectIdentifier: ManagedObject] = [:]
    var deleted: [ObjectIdentifier: ManagedObject] = [:]
    var refreshed: [ObjectIdentifier: ManagedObject] = [:]
    var invalidated: [ObjectIdentifier: ManagedObject] = [:]
    var invalidatedAll = false

    var isEmpty: Bool {
        inserted.isEmpty && updated.isEmpty && deleted.isEmpty && refreshed.isEmpty && invalidated.isEmpty
            && !invalidatedAll
    }

    var notification: ObjectsDidChange {
        ObjectsDidChange(
            insertedObjects: Set(inserted.values), updatedObjects: Set(updated.values),
            deletedObjects: Set(deleted.values),
            refreshedObjects: Set(refreshed.values), invalidatedObjects: Set(invalidated.values),
            invalidatedAllObjects: invalidatedAll)
    }
}

extension ManagedObjectContext {
    // MARK: Observers

    /// Calls `observer` on the context's executor with what changed among its objects, whenever
    /// ``processPendingChanges()`` finds changes (at the end of each `perform` block, at save,
    /// after merges, or when called).
    @discardableResult
    public func addObjectsDidChangeObserver(_ observer: @escaping (ObjectsDidChange) -> Void) -> ObserverToken {
        checkConfinement("addObjectsDidChangeObserver(_:)")
        let token = observers.token()
        observers.objectsDidChange.append((token, observer))
        tracksObjectChanges = true
        return token
    }

    /// Calls `observer` on the context's executor when a save begins (after delete rules, before
    /// `willSave()` hooks and validation).
    @discardableResult
    public func addWillSaveObserver(_ observer: @escaping () -> Void) -> ObserverToken {
        checkConfinement("addWillSaveObserver(_:)")
        let token = observers.token()
        observers.willSave.append((token, observer))
        return token
    }

    /// Calls `observer` on the context's executor after every successful save of this context
    /// (to its stores, or, for a child context, into its parent).
    @discardableResult
    public func addDidSaveObserver(_ observer: @escaping (ContextDidSave) -> Void) -> ObserverToken {
        checkConfinement("addDidSaveObserver(_:)")
        let token = observers.token()
        observers.didSave.append((token, observer))
        return token
    }

    /// Calls `observer` on the context's executor after changes saved elsewhere were merged in
    /// (``mergeChanges(fromContextDidSave:)``, automatic merges).
    @discardableResult
    public func addDidMergeChangesObserver(_ observer: @escaping (ObjectIDChanges) -> Void) -> ObserverToken {
        checkConfinement("addDidMergeChangesObserver(_:)")
        let token = observers.token()
        observers.didMergeChanges.append((token, observer))
        return token
    }

    /// Removes an observer added with one of the `add…Observer` methods.
    public func removeObserver(_ token: ObserverToken) {
        checkConfinement("removeObserver(_:)")
        observers.remove(token)
        tracksObjectChanges = !observers.objectsDidChange.isEmpty || eventStreams.count.load(ordering: .relaxed) > 0
    }

    /// Removes an observer from inside an observer call (on the executor, so not checked again).
    func removeObserverFromOwnExecutor(_ token: ObserverToken) {
        observers.remove(token)
        tracksObjectChanges = !observers.objectsDidChange.isEmpty || eventStreams.count.load(ordering: .relaxed) > 0
    }

    /// The context's notifications as an `AsyncSequence`, from now on, until the consumer stops
    /// iterating (or the context is gone). Events are buffered; each carries IDs, not objects.
    public func events() -> AsyncStream<ContextEvent> {
        checkConfinement("events()")
        tracksObjectChanges = true
        return eventStreams.make()
    }

    // MARK: Posting

    /// Whether objects-did-change has anyone to tell.
    var observesObjectChanges: Bool {
        tracksObjectChanges && (!observers.objectsDidChange.isEmpty || eventStreams.count.load(ordering: .relaxed) > 0)
    }

    func noteInserted(_ object: ManagedObject) {
        if tracksObjectChanges { pendingChanges.inserted[ObjectIdentifier(object)] = object }
    }

    /// Records a change to `object` for the next objects-did-change. Inlined to the flag's test:
    /// every attribute set calls it, and nothing is recorded while nobody observes.
    @inline(__always) func noteChanged(_ object: ManagedObject) {
        if tracksObjectChanges { recordChanged(object) }
    }

    private func recordChanged(_ object: ManagedObject) {
        if pendingChanges.inserted[ObjectIdentifier(object)] == nil {
            pendingChanges.updated[ObjectIdentifier(object)] = object
        }
    }

    func noteDeleted(_ object: ManagedObject) {
        if tracksObjectChanges { pendingChanges.deleted[ObjectIdentifier(object)] = object }
    }

    func noteRefreshed(_ object: ManagedObject) {
        if tracksObjectChanges { pendingChanges.refreshed[ObjectIdentifier(object)] = object }
    }

    func noteInvalidated(_ object: ManagedObject) {
        if tracksObjectChanges { pendingChanges.invalidated[ObjectIdentifier(object)] = object }
    }

    func noteInvalidatedAll() {
        if tracksObjectChanges {
            pendingChanges = PendingObjectChanges()
            pendingChanges.invalidatedAll = true
        }
    }

    /// Posts objects-did-change with what changed since the last post, if anything did.
    func postObjectsDidChange() {
        guard tracksObjectChanges, !pendingChanges.isEmpty else { return }
        let changes = pendingChanges
        pendingChanges = PendingObjectChanges()
        guard observesObjectChanges else { return }
        let notification = changes.notification
        for (_, observer) in observers.objectsDidChange { observer(notification) }
        if eventStreams.count.load(ordering: .relaxed) > 0 {
            eventStreams.yield(.objectsDidChange(notification.objectIDs))
        }
    }

    func postWillSave() {
        for (_, observer) in observers.willSave { observer() }
        if eventStreams.count.load(ordering: .relaxed) > 0 { eventStreams.yield(.willSave) }
    }

    /// Whether a did-save record is wanted (observers, streams, or contexts that merge this one's saves).
    var wantsDidSave: Bool {
        !observers.didSave.isEmpty || eventStreams.count.load(ordering: .relaxed) > 0 || coordinator.hasMergingContexts
            || hasMergingChildren
    }

    func postDidSave(_ saved: ContextDidSave) {
        for (_, observer) in observers.didSave { observer(saved) }
        if eventStreams.count.load(ordering: .relaxed) > 0 { eventStreams.yield(.didSave(saved)) }
    }

    func postDidMergeChanges(_ changes: ObjectIDChanges) {
        for (_, observer) in observers.didMergeChanges { observer(changes) }
        if eventStreams.count.load(ordering: .relaxed) > 0 { eventStreams.yield(.didMergeChanges(changes)) }
    }
}
