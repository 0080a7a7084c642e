import Foundation

// Changes other processes commit to a shared store (PostgreSQL's notifications): the rows leave the
// row cache (the cached versions are stale), observers hear of them, and every context that merges
// automatically merges them as it would another context's save.

extension PersistentStoreCoordinator {
    /// Calls `observer` (on the thread the store reports from) with each batch of changes another
    /// process committed to one of the coordinator's stores, as object IDs (Core Data's
    /// `NSPersistentStoreRemoteChange`). Contexts with
    /// ``ManagedObjectContext/automaticallyMergesChangesFromParent`` merge them on their own.
    @discardableResult
    public func addRemoteChangeObserver(_ observer: @escaping @Sendable (ContextDidSave) -> Void) -> ObserverToken {
        remoteObservers.withLock { list in
            let token = ObserverToken(value: UInt64(list.count + 1) << 32 | UInt64.random(in: 0..<(1 << 32)))
            list.append((token, observer))
            return token
        }
    }

    /// Removes an observer added with ``addRemoteChangeObserver(_:)``.
    public func removeRemoteChangeObserver(_ token: ObserverToken) {
        remoteObservers.withLock { list in list.removeAll { $0.0 == token } }
    }

    /// Takes a driver's report of remote changes to `store`.
    func deliverRemoteChanges(_ changes: RemoteChanges, in store: PersistentStore) {
        guard !changes.isEmpty, !store.isClosed else { return }
        let key = ObjectIdentifier(store)
        if changes.mayHaveMissedChanges {
            rowCache.removeAll(in: key)
        } else {
            rowCache.remove((changes.updated + changes.deleted).map { RowCache.Key(store: key, row: $0) })
        }
        guard !(changes.inserted.isEmpty && changes.updated.isEmpty && changes.deleted.isEmpty) else { return }
        let model = managedObjectModel
        var anchors = ObjectIDAnchors()
        func ids(_ rows: [RowID]) -> [ManagedObjectID] {
            rows.compactMap { row in
                guard row.primaryKey > 0, store.holds(entityNumber: row.entity),
                    let entity = model.entity(number: row.entity)
                else { return nil }
                return anchors.id(entity, row, store)
            }
        }
        let saved = ContextDidSave(
            insertedObjectIDs: ids(changes.inserted), updatedObjectIDs: ids(changes.updated),
            deletedObjectIDs: ids(changes.deleted))
        for context in mergingContexts.contexts { context.receive(saved) }
        for (_, observer) in remoteObservers.withLock({ $0 }) { observer(saved) }
    }
}
