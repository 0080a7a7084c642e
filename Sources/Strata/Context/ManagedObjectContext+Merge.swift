import Foundation
import Synchronization

// Merging changes saved elsewhere (Core Data's `mergeChanges(fromContextDidSave:)` and
// `automaticallyMergesChangesFromParent`). A save posts what it changed as IDs (`ContextDidSave`);
// a context merging it refreshes the objects it holds that changed (keeping its own unsaved
// changes as its merge policy says), turns deleted ones into inaccessible objects, and registers
// inserted ones, then posts objects-did-change and did-merge-changes.
//
// Automatic merges arrive in an inbox from the saving thread and are merged on the receiving
// context's executor: at once on the main queue for a main-queue context, and for any context at
// its next entry point (a fetch, a save, `perform`, …).

/// Contexts held weakly, shared between threads.
final class ContextList: Sendable {
    private struct Entry: @unchecked Sendable {
        // @unchecked Sendable: the reference is only compared or used to reach the context's
        // thread-safe parts (its inbox, its queue); the Mutex around the list orders access.
        weak var context: ManagedObjectContext?
    }
    private let entries = Locked<[Entry]>([])

    func add(_ context: ManagedObjectContext) {
        entries.withLock { list in
            list.removeAll { $0.context == nil }
            list.append(Entry(context: context))
        }
    }

    func remove(_ context: ManagedObjectContext) {
        entries.withLock { list in list.removeAll { $0.context == nil || $0.context === context } }
    }

    /// The live contexts.
    var contexts: [ManagedObjectContext] { entries.withLock { $0.compactMap(\.context) } }

    var isEmpty: Bool { entries.withLock { list in !list.contains { $0.context != nil } } }
}

/// Work for a context posted from other threads: saves to merge, permanent IDs to adopt.
final class MergeInbox: Sendable {
    enum Item: Sendable {
        case save(ContextDidSave)
        case permanentIDs([RowID: ManagedObjectID])
    }
    private let items = Locked<[Item]>([])
    /// Whether items are waiting (checked at entry points without taking the lock).
    let hasPending = Atomic<Bool>(false)
    /// Whether the owning context merges saves automatically (readable from saving threads).
    let isEnabled = Atomic<Bool>(false)

    func post(_ saved: ContextDidSave) { post(.save(saved)) }

    func post(ids mapping: [RowID: ManagedObjectID]) { post(.permanentIDs(mapping)) }

    private func post(_ item: Item) {
        items.withLock { $0.append(item) }
        hasPending.store(true, ordering: .releasing)
    }

    func take() -> [Item] {
        items.withLock { list in
            hasPending.store(false, ordering: .releasing)
            defer { list.removeAll() }
            return list
        }
    }
}

extension PersistentStoreCoordinator {
    /// Whether any root context merges saves automatically.
    var hasMergingContexts: Bool { !mergingContexts.isEmpty }

    /// Hands a save of `saver` to every other root context that merges automatically.
    func broadcast(_ saved: ContextDidSave, from saver: ManagedObjectContext) {
        for context in mergingContexts.contexts where context !== saver { context.receive(saved) }
    }
}

extension ManagedObjectContext {
    /// Whether the context merges saves made by other contexts to its parent (the coordinator's
    /// stores for a root context, the parent context for a child) on its own, on its executor
    /// (Core Data's `automaticallyMergesChangesFromParent`). `false` by default;
    /// ``PersistentContainer/viewContext`` turns it on.
    public var automaticallyMergesChangesFromParent: Bool {
        get { mergeInbox.isEnabled.load(ordering: .relaxed) }
        set {
            checkConfinement("automaticallyMergesChangesFromParent")
            mergeInbox.isEnabled.store(newValue, ordering: .relaxed)
            if parent == nil {
                if newValue { coordinator.mergingContexts.add(self) } else { coordinator.mergingContexts.remove(self) }
            }
        }
    }

    /// Whether a child of this context merges automatically.
    var hasMergingChildren: Bool {
        children.contexts.contains { $0.mergeInbox.isEnabled.load(ordering: .relaxed) }
    }

    /// Takes a save made elsewhere, from any thread, to merge on this context's executor.
    func receive(_ saved: ContextDidSave) {
        mergeInbox.post(saved)
        if concurrencyType == .mainQueue {
            DispatchQueue.main.async { [weak self] in self?.drainMerges() }
        }
    }

    /// Merges saves waiting in the inbox; a check of one flag when there are none.
    @inline(__always) func drainMerges() {
        if mergeInbox.hasPending.load(ordering: .acquiring) { mergePending() }
    }

    private func mergePending() {
        for item in mergeInbox.take() {
            switch item {
            case .permanentIDs(let mapping):
                adoptPermanentIDs(mapping)
                for child in children.contexts {
                    child.mergeInbox.post(ids: mapping)
                    if child.concurrencyType == .mainQueue {
                        DispatchQueue.main.async { [weak child] in child?.drainMerges() }
                    }
                }
            case .save(let saved):
                do {
                    try merge(saved)
                } catch {
                    noteAccessFailure(error)
                }
            }
        }
    }

    /// Merges a save made by another context (Core Data's `mergeChanges(fromContextDidSave:)`):
    /// objects this context holds that the save updated take the saved values (unsaved changes of
    /// this context are kept on top, except where the merge policy is
    /// ``MergePolicy/mergeByPropertyStoreTrump`` or ``MergePolicy/rollback``); deleted ones become
    /// inaccessible and leave the change lists; inserted ones are registered, so fetches and
    /// observers see them. Posts objects-did-change and did-merge-changes.
    ///
    /// A store error while loading the saved values is kept in ``accessFailure`` (the objects
    /// concerned stay faults and load on their next access).
    public func mergeChanges(fromContextDidSave saved: ContextDidSave) {
        checkConfinement("mergeChanges(fromContextDidSave:)")
        do {
            try merge(saved)
        } catch {
            noteAccessFailure(error)
        }
    }

    func merge(_ saved: ContextDidSave) throws {
        var changes = ObjectIDChanges()
        var stale: [ManagedObject] = []
        for id in saved.updatedObjectIDs {
            guard let object = registeredObjectForMerge(id), object.isAccessible else { continue }
            if object.faulted {
                // Its stashed row is old: the next access loads the saved one.
                object.snapshot = nil
                changes.refreshed.insert(id)
                noteRefreshed(object)
                continue
            }
            stale.append(object)
        }
        let fresh = try currentValues(for: stale)
        for object in stale {
            let id = object.objectID
            if let state = fresh[ObjectIdentifier(object)] {
                mergeSaved(object, state)
                changes.refreshed.insert(id)
                noteRefreshed(object)
            } else {
                dropDeleted(object)
                changes.deleted.insert(id)
            }
        }
        for id in saved.deletedObjectIDs {
            guard let object = registeredObjectForMerge(id), object.isAccessible else { continue }
            dropDeleted(object)
            changes.deleted.insert(id)
        }
        for id in saved.insertedObjectIDs where registeredObjectForMerge(id) == nil {
            guard let object = mergedInsert(id) else { continue }
            noteInserted(object)
            changes.inserted.insert(id)
        }
        postObjectsDidChange()
        postDidMergeChanges(changes)
    }

    private func registeredObjectForMerge(_ id: ManagedObjectID) -> ManagedObject? {
        if let object = registered[id], object.entity === id.entity { return object }
        return nil
    }

    /// The object for an ID a merged save inserted: a fault for a saved row, or (in a child) the
    /// parent's unsaved object.
    private func mergedInsert(_ id: ManagedObjectID) -> ManagedObject? {
        if id.isTemporaryID {
            // safe: a missing parent object is simply not merged
            return parent != nil ? (try? borrowedObject(for: id)) ?? nil : nil
        }
        guard let store = id.persistentStore, store.coordinatorAttached else { return nil }
        return fault(for: id)
    }

    /// Takes the saved state of an object this context holds loaded: values the save changed
    /// replace the object's, its own unsaved changes stay on top as the merge policy says.
    func mergeSaved(_ object: ManagedObject, _ state: SourceState) {
        let row = state.row
        guard object.hasChangedSlots else {
            object.values = row.values
            object.snapshot = row
            return
        }
        let cached = object.snapshot?.values
        var kept = SlotSet()
        for slot in object.entity.properties.indices where slot < row.values.count {
            if object.entity.properties[slot].isTransient {
                if object.isSlotChanged(slot) { kept.insert(slot) }
                continue
            }
            let changedHere = object.isSlotChanged(slot)
            let storedValue = row.values[slot]
            let changedThere: Bool
            if case .unfetched = storedValue {
                changedThere = false
            } else {
                changedThere = cached.map { $0[slot] != storedValue } ?? true
            }
            let storeWins: Bool
            switch mergePolicy.kind {
            case .mergeByPropertyStoreTrump: storeWins = changedThere || !changedHere
            case .rollback: storeWins = true
            case .error, .mergeByPropertyObjectTrump, .overwrite: storeWins = !changedHere
            }
            if storeWins {
                object.values[slot] = storedValue
            } else if changedHere {
                kept.insert(slot)
            }
        }
        object.snapshot = row
        object.changedSlots = kept
        if kept.isEmpty { updatedList.remove(object) }
    }

    /// An object a merged save deleted: inaccessible, out of the change lists, its pin released.
    func dropDeleted(_ object: ManagedObject) {
        updatedList.remove(object)
        deletedList.remove(object)
        faultBatches[ObjectIdentifier(object)] = nil
        if let key = object.pinnedKey { coordinator.rowCache.unpin([key]) }
        object.pinnedKey = nil
        object.clearChangedSlots()
        markInaccessible(object)
        noteDeleted(object)
    }
}

extension PersistentStore {
    /// Whether the store is still attached (not removed from its coordinator).
    var coordinatorAttached: Bool { !isClosed }
}
