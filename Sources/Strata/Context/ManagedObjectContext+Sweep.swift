import Foundation

// Registration that does not keep every fetched object alive (Core Data's weak registration): an
// object with no unsaved changes that nothing outside the context holds is let go at the next sweep,
// and its row unpinned, so a long-lived context (a view context fetching again and again) does not
// grow with every object it ever saw. Sweeps run at the start of a fetch once the registered objects
// have doubled since the last sweep (at least 4,096), so their cost is amortized O(1) per object.
// `retainsRegisteredObjects` turns this off.

extension ManagedObjectContext {
    /// The fewest registered objects that start a sweep.
    static let sweepFloor = 4_096

    /// Sweeps when the registered objects have doubled since the last sweep.
    @inline(__always) func sweepIfGrown() {
        let count = registered.count
        if !retainsRegisteredObjects, count >= Self.sweepFloor, count >= 2 * countAfterSweep {
            sweepUnreferencedObjects()
        }
    }

    /// Lets go of every registered object with no unsaved changes that nothing outside the context
    /// holds (see ``retainsRegisteredObjects``), releasing their rows' pins.
    ///
    /// - Returns: How many objects went.
    /// - Complexity: O(n) for n registered objects.
    @discardableResult
    func sweepUnreferencedObjects() -> Int {
        flushPins()
        var unpinned: [RowCache.Key] = []
        let gone = registered.sweep { object in
            if let key = object.pinnedKey { unpinned.append(key) }
            object.pinnedKey = nil
            faultBatches[ObjectIdentifier(object)] = nil
            fetchedPropertyResults[ObjectIdentifier(object)] = nil
            object.context = nil
        }
        if !unpinned.isEmpty { coordinator.rowCache.unpin(unpinned) }
        countAfterSweep = registered.count
        return gone
    }

    /// The end of a block of work on the executor (a `perform` block): merges waiting saves,
    /// applies delete rules and posts objects-did-change, as Core Data's `processPendingChanges`
    /// does at the end of each event.
    func endOfEvent() {
        drainMerges()
        do {
            try applyDeleteRules()
        } catch {
            noteAccessFailure(error)
        }
        postObjectsDidChange()
    }
}
