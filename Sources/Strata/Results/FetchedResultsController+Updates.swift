import Foundation

// Following the context: each objects-did-change notification becomes one update of the
// controller. The objects it names are classified against F3 (belongs now? was in before?), their
// old positions read, the sections changed in place (O(log n) comparisons per object), their new
// positions read, and the update reported. No refetch, except after a reset of the context.

/// Holds an observer's token for the observer's own closure (set right after registration).
final class ObserverTokenBox {
    var tokens: [ObserverToken] = []
}

extension FetchedResultsController {
    /// Registers for the context's objects-did-change and did-save notifications. The closures
    /// hold the controller weakly and remove themselves once it is gone.
    func startObserving() {
        let context = managedObjectContext
        let box = ObserverTokenBox()
        let removeAll = { [weak context] in
            guard let context else { return }
            for token in box.tokens { context.removeObserverFromOwnExecutor(token) }
        }
        let changes = context.addObjectsDidChangeObserver { [weak self] changes in
            guard let self else { return removeAll() }
            self.follow(changes)
        }
        let saves = context.addDidSaveObserver { [weak self] saved in
            guard let self else { return removeAll() }
            self.adoptPermanentIDs(saved)
        }
        box.tokens = [changes, saves]
        observers = box.tokens
    }

    /// One objects-did-change notification.
    func follow(_ changes: ObjectsDidChange) {
        guard hasFetched else { return }
        if changes.invalidatedAllObjects {
            refetchAfterReset()
            return
        }
        var objects: [ObjectIdentifier: ManagedObject] = [:]
        for set in [
            changes.insertedObjects, changes.updatedObjects, changes.deletedObjects, changes.refreshedObjects,
            changes.invalidatedObjects,
        ] {
            for object in set { objects[ObjectIdentifier(object)] = object }
        }
        apply(Array(objects.values), rekeyOnly: false)
    }

    /// After a save, inserted objects have permanent IDs: ties between equal sort values follow
    /// them (F3: the order a refetch gives).
    func adoptPermanentIDs(_ saved: ContextDidSave) {
        guard hasFetched, !saved.insertedObjectIDs.isEmpty else { return }
        var moved: [ManagedObject] = []
        for id in saved.insertedObjectIDs {
            guard let object = managedObjectContext.registered[id], let placement = located[ObjectIdentifier(object)],
                placement.entry.tie != object.objectID.rowID
            else { continue }
            moved.append(object)
        }
        // One at a time: a lone move's index paths before and after compare, so an object whose
        // position did not change (the usual case: no equal sort values) is not reported.
        for object in moved { apply([object], rekeyOnly: true) }
    }

    /// Whether an object belongs to the results now (F3).
    private func belongs(_ object: ManagedObject) -> Bool {
        guard let entity, object.isIn(managedObjectContext), !object.deleted, object.isAccessible else { return false }
        guard fetchRequest.includesSubentities ? object.entity.isKind(of: entity) : object.entity === entity else {
            return false
        }
        guard let predicate = fetchRequest.predicate else { return true }
        // A predicate that cannot be evaluated on the object (a store error loading a fault) leaves
        // it out; the context keeps the store's error for its next save.
        do {
            try object.fireFaultThrowing()
            return try predicate.evaluate(with: object)
        } catch {
            managedObjectContext.noteAccessFailure(error)
            return false
        }
    }

    /// Changes the sections for `objects` and reports the update.
    ///
    /// - Parameter rekeyOnly: Only ties changed (permanent IDs): objects that keep their index
    ///   path are not reported.
    private func apply(_ objects: [ManagedObject], rekeyOnly: Bool) {
        enum Kind { case insert, delete, move, update }
        var work: [(object: ManagedObject, kind: Kind, old: Placement?, new: Placement?)] = []
        for object in objects {
            let old = located[ObjectIdentifier(object)]
            var new: Placement?
            // a sort value that cannot be read leaves it out, as above
            if belongs(object), let entry = try? entry(for: object) {
                new = Placement(section: sectionName(of: entry), entry: entry)
            }
            switch (old, new) {
            case (nil, nil): continue
            case (nil, _?): work.append((object, .insert, nil, new))
            case (_?, nil): work.append((object, .delete, old, nil))
            case (let old?, let new?):
                let same =
                    old.section == new.section && old.entry.key == new.entry.key && old.entry.tie == new.entry.tie
                    && old.entry.store == new.entry.store
                work.append((object, same ? .update : .move, old, new))
            }
        }
        guard !work.isEmpty else { return }

        // Before: positions of what leaves or moves, and section indexes.
        let oldPrefix = sectionPrefixes()
        var oldSectionIndex: [String: Int] = [:]
        for (index, section) in sectionList.enumerated() { oldSectionIndex[section.name] = index }
        var oldPaths: [ObjectIdentifier: IndexPath] = [:]
        for item in work {
            if let old = item.old, let path = indexPath(of: old) { oldPaths[ObjectIdentifier(item.object)] = path }
        }

        // Change the sections: removals first, then insertions, then sections left empty go (a
        // section emptied and refilled in one update stays, unreported).
        var emptied: [SectionStorage] = []
        for item in work where item.kind == .delete || item.kind == .move {
            guard let old = item.old, let section = sectionsByName[old.section] else { continue }
            section.entries.remove(old.entry)
            located[ObjectIdentifier(item.object)] = nil
            if section.entries.count == 0, sectionNameKeyPath != nil { emptied.append(section) }
        }
        // Empty sections cannot be ordered: take them out of the list (keeping the dictionary)
        // while insertions place new sections, and put refilled ones back in order after.
        if !emptied.isEmpty { sectionList.removeAll { $0.entries.count == 0 && sectionNameKeyPath != nil } }
        var insertedSections: [SectionStorage] = []
        for item in work where item.kind == .insert || item.kind == .move {
            guard let new = item.new else { continue }
            located[ObjectIdentifier(item.object)] = new
            if let section = sectionsByName[new.section] {
                let wasEmpty = section.entries.count == 0
                section.entries.insert(new.entry)
                if wasEmpty { sectionList.insert(section, at: insertionIndex(for: section)) }
                continue
            }
            let section = makeSection(new.section, OrderedEntries(sorted: [new.entry], precedes: order.precedes))
            sectionList.insert(section, at: insertionIndex(for: section))
            sectionsByName[new.section] = section
            insertedSections.append(section)
        }
        var removedSections: [String] = []
        for section in emptied where section.entries.count == 0 && sectionsByName[section.name] === section {
            sectionsByName[section.name] = nil
            removedSections.append(section.name)
        }
        for item in work where item.kind == .update {
            // Same values: the entry stays; only the object's values changed.
            if let new = item.new { located[ObjectIdentifier(item.object)] = new }
        }
        contentChanged()
        #if STRATA_CHECKS
            checkInvariants()
        #endif

        // After: new positions, and the report.
        let newPrefix = sectionPrefixes()
        var sectionChanges: [FetchedResultsSectionChange] = []
        let deletedSections = removedSections.compactMap { name in oldSectionIndex[name].map { (name, $0) } }.sorted {
            $0.1 > $1.1
        }
        for (name, index) in deletedSections {
            sectionChanges.append(FetchedResultsSectionChange(type: .delete, name: name, index: index))
        }
        let added = insertedSections.compactMap { section in sectionIndex(of: section).map { (section, $0) } }.sorted {
            $0.1 < $1.1
        }
        for (section, index) in added {
            sectionChanges.append(FetchedResultsSectionChange(type: .insert, name: section.name, index: index))
        }

        var objectChanges: [(ManagedObject, FetchedResultsObjectChange)] = []
        var differenceChanges: [CollectionDifference<ManagedObjectID>.Change] = []
        let order: [Kind] = [.delete, .insert, .move, .update]
        for kind in order {
            for item in work where item.kind == kind {
                let id = item.object.objectID
                let oldPath = oldPaths[ObjectIdentifier(item.object)]
                let newPath = item.new.flatMap { indexPath(of: $0) }
                let oldFlat = oldPath.flatMap { path in oldPrefix.count > path[0] ? oldPrefix[path[0]] + path[1] : nil }
                let newFlat = newPath.flatMap { path in newPrefix.count > path[0] ? newPrefix[path[0]] + path[1] : nil }
                switch kind {
                case .delete:
                    objectChanges.append(
                        (
                            item.object,
                            FetchedResultsObjectChange(
                                type: .delete, objectID: id, indexPath: oldPath, newIndexPath: nil)
                        ))
                    if let oldFlat {
                        differenceChanges.append(.remove(offset: oldFlat, element: id, associatedWith: nil))
                    }
                case .insert:
                    objectChanges.append(
                        (
                            item.object,
                            FetchedResultsObjectChange(
                                type: .insert, objectID: id, indexPath: nil, newIndexPath: newPath)
                        ))
                    if let newFlat {
                        differenceChanges.append(.insert(offset: newFlat, element: id, associatedWith: nil))
                    }
                case .move:
                    // A lone re-tied object that kept its place is not reported. Otherwise index
                    // paths before and after an update are not comparable (other rows and sections
                    // move too): a changed position is always reported as a move.
                    if rekeyOnly && oldPath == newPath { continue }
                    objectChanges.append(
                        (
                            item.object,
                            FetchedResultsObjectChange(
                                type: .move, objectID: id, indexPath: oldPath, newIndexPath: newPath)
                        ))
                    if let oldFlat, let newFlat {
                        differenceChanges.append(.remove(offset: oldFlat, element: id, associatedWith: newFlat))
                        differenceChanges.append(.insert(offset: newFlat, element: id, associatedWith: oldFlat))
                    }
                case .update:
                    if rekeyOnly { continue }
                    objectChanges.append(
                        (
                            item.object,
                            FetchedResultsObjectChange(
                                type: .update, objectID: id, indexPath: oldPath, newIndexPath: newPath)
                        ))
                }
            }
        }
        guard !objectChanges.isEmpty || !sectionChanges.isEmpty else { return }
        // an empty difference is always valid
        let difference = CollectionDifference(differenceChanges) ?? CollectionDifference<ManagedObjectID>([])!
        report(
            FetchedResultsUpdate(
                sectionChanges: sectionChanges, objectChanges: objectChanges.map(\.1), difference: difference),
            objects: objectChanges.map(\.0), insertedSections: added.map(\.0))
    }

    /// Where a new section goes: by binary search over the ordered sections.
    private func insertionIndex(for section: SectionStorage) -> Int {
        var low = 0
        var high = sectionList.count
        while low < high {
            let middle = (low + high) / 2
            if precedes(sectionKey: sectionList[middle], section) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The number of objects before each section.
    ///
    /// - Complexity: O(s) for s sections.
    private func sectionPrefixes() -> [Int] {
        var prefixes: [Int] = []
        prefixes.reserveCapacity(sectionList.count)
        var total = 0
        for section in sectionList {
            prefixes.append(total)
            total += section.entries.count
        }
        return prefixes
    }

    /// Tells the delegate and the streams.
    private func report(_ update: FetchedResultsUpdate, objects: [ManagedObject], insertedSections: [SectionStorage]) {
        if let delegate {
            delegate.controllerWillChangeContent(self)
            for change in update.sectionChanges {
                if change.type == .delete {
                    let gone = SectionStorage(
                        name: change.name, indexTitle: sectionIndexTitle(forSectionName: change.name),
                        entries: OrderedEntries(sorted: [], precedes: order.precedes))
                    delegate.controller(
                        self, didChange: FetchedResultsSection(storage: gone), atSectionIndex: change.index,
                        for: .delete)
                } else if let section = insertedSections.first(where: { $0.name == change.name }) {
                    delegate.controller(
                        self, didChange: FetchedResultsSection(storage: section), atSectionIndex: change.index,
                        for: .insert)
                }
            }
            for (object, change) in zip(objects, update.objectChanges) {
                delegate.controller(
                    self, didChange: object, at: change.indexPath, for: change.type, newIndexPath: change.newIndexPath)
            }
            delegate.controllerDidChangeContent(self)
            delegate.controller(self, didChangeContentWith: update.difference)
            if delegate.wantsSnapshots { delegate.controller(self, didChangeContentWith: snapshot) }
        }
        if !streams.isEmpty { streams.yield(update) }
    }

    /// After a reset every object is gone: refetch, and report all old objects deleted and all new
    /// ones inserted.
    private func refetchAfterReset() {
        let oldSections = sectionList.map(\.name)
        let oldCount = sectionList.reduce(0) { $0 + $1.entries.count }
        var oldIDs: [(ManagedObject, IndexPath, ManagedObjectID)] = []
        for (s, section) in sectionList.enumerated() {
            for (r, entry) in section.entries.elements.enumerated() {
                oldIDs.append((entry.object, IndexPath(indexes: [s, r]), entry.object.objectID))
            }
        }
        do {
            rebuild(from: try fetchEntries())
        } catch {
            managedObjectContext.noteAccessFailure(error)
            rebuild(from: [])
        }
        var sectionChanges: [FetchedResultsSectionChange] = []
        var objectChanges: [(ManagedObject, FetchedResultsObjectChange)] = []
        var differenceChanges: [CollectionDifference<ManagedObjectID>.Change] = []
        if sectionNameKeyPath != nil {
            for (index, name) in oldSections.enumerated().reversed() {
                sectionChanges.append(FetchedResultsSectionChange(type: .delete, name: name, index: index))
            }
            for (index, section) in sectionList.enumerated() {
                sectionChanges.append(FetchedResultsSectionChange(type: .insert, name: section.name, index: index))
            }
        }
        for (flat, (object, path, id)) in oldIDs.enumerated() {
            objectChanges.append(
                (object, FetchedResultsObjectChange(type: .delete, objectID: id, indexPath: path, newIndexPath: nil)))
            differenceChanges.append(.remove(offset: flat, element: id, associatedWith: nil))
        }
        var flat = 0
        for (s, section) in sectionList.enumerated() {
            for (r, entry) in section.entries.elements.enumerated() {
                let id = entry.object.objectID
                objectChanges.append(
                    (
                        entry.object,
                        FetchedResultsObjectChange(
                            type: .insert, objectID: id, indexPath: nil, newIndexPath: IndexPath(indexes: [s, r]))
                    ))
                differenceChanges.append(.insert(offset: flat, element: id, associatedWith: nil))
                flat += 1
            }
        }
        guard oldCount > 0 || flat > 0 else { return }
        // an empty difference is always valid
        let difference = CollectionDifference(differenceChanges) ?? CollectionDifference<ManagedObjectID>([])!
        report(
            FetchedResultsUpdate(
                sectionChanges: sectionChanges, objectChanges: objectChanges.map(\.1), difference: difference),
            objects: objectChanges.map(\.0), insertedSections: sectionList)
    }
}
