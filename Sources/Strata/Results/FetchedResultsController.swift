import Foundation

// FETCHED RESULTS CONTROLLER INVARIANTS
// F1. Every entry of every section is in `located`, under its object, with the section name, sort
//     values and tie it was placed by; `located` holds nothing else.
// F2. Sections are in order of their first sort value, then their name; no section is empty,
//     except the one section of a controller without a section key path.
// F3. An object is in the controller exactly when, as its context sees it after the last update,
//     it is registered, not deleted, accessible, of the entity (or a subentity when the request
//     includes them) and accepted by the predicate: the objects a refetch would return, in the
//     order it would return them.
// States: created -> fetched [performFetch] -> updated [each objects-did-change] -> fetched again
//         [performFetch, or a reset of the context].

/// Keeps the results of a fetch request up to date as its context changes, in sections, and
/// reports each change (Core Data's `NSFetchedResultsController`).
///
/// ```swift
/// var request = FetchRequest(entityName: "Employee", sortKeys: [SortKey("department.name"), SortKey("name")])
/// let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "department.name")
/// controller.delegate = self
/// try controller.performFetch()
/// controller.sections?[0].numberOfObjects
/// controller.object(at: IndexPath(indexes: [0, 0]))
/// ```
///
/// The controller follows its context's objects-did-change notifications: the context's own
/// inserts, updates and deletes (at the end of each `perform` block, at `processPendingChanges()`
/// and at save), and changes merged from other contexts (`mergeChanges(fromContextDidSave:)`,
/// `automaticallyMergesChangesFromParent`). It never refetches for them: an update of k changed
/// objects costs O(k log n) comparisons for n results. Each update is reported to the
/// ``delegate`` (per change, as a `CollectionDifference`, and optionally as a snapshot) and to
/// the streams of ``updates()``.
///
/// Rules, as Core Data's: the request needs sort keys; a section key path must be the first sort
/// key's key path (so sections are runs of the sorted objects); offsets and limits are refused.
/// Objects are re-sorted when they themselves change; a change to a related object that a sort
/// key or the predicate reads through a relationship (`department.name`) is not seen until the
/// object changes or ``performFetch()`` runs again, as in Core Data.
///
/// With a ``FetchRequest/fetchBatchSize``, ``performFetch()`` reads the sort values from the
/// fetched rows and keeps the objects as faults, which load a batch at a time when used.
///
/// Thread safety: not `Sendable`; confined to its context's executor, like the context's objects.
/// Use it inside `perform`/`performAndWait` (or on the main thread for a main-queue context).
public final class FetchedResultsController {
    /// The request whose results the controller keeps.
    public let fetchRequest: FetchRequest
    /// The context the controller fetches in and follows.
    public let managedObjectContext: ManagedObjectContext
    /// The key path whose values name the sections; `nil` for one section.
    public let sectionNameKeyPath: String?
    /// Receives each update.
    public weak var delegate: (any FetchedResultsControllerDelegate)?

    var sectionList: [SectionStorage] = []
    var sectionsByName: [String: SectionStorage] = [:]
    /// Where each object is (F1).
    var located: [ObjectIdentifier: Placement] = [:]
    var hasFetched = false
    private var flattened: [ManagedObject]?
    var observers: [ObserverToken] = []
    let streams = UpdateStreams()
    let entity: EntityDescription?
    /// The coordinator's stores, in order, for tie-breaks between equal row IDs of two stores.
    private var storeOrder: [ObjectIdentifier: Int] = [:]

    /// Where an object is: its section and the values it was placed by.
    struct Placement {
        var section: String
        var entry: ResultEntry
    }

    /// Creates a controller; nothing is fetched until ``performFetch()``.
    ///
    /// - Parameters:
    ///   - fetchRequest: The request; it needs sort keys, and no offset or limit.
    ///   - managedObjectContext: The context to fetch in and follow.
    ///   - sectionNameKeyPath: The key path naming sections; it must be the first sort key's.
    public init(
        fetchRequest: FetchRequest, managedObjectContext: ManagedObjectContext, sectionNameKeyPath: String? = nil
    ) {
        self.fetchRequest = fetchRequest
        self.managedObjectContext = managedObjectContext
        self.sectionNameKeyPath = sectionNameKeyPath
        self.entity = managedObjectContext.coordinator.managedObjectModel.entity(named: fetchRequest.entityName)
    }

    deinit {
        streams.finishAll()
    }

    // MARK: Fetching

    /// Fetches the results and starts following the context's changes (Core Data's `performFetch()`).
    /// Calling it again refetches (after changing what the predicate reads through relationships,
    /// say); no update is reported for it.
    ///
    /// - Throws: ``StoreError/Code/invalidRequest`` for a request without sort keys, a section key
    ///   path that is not the first sort key's, an offset or limit, or an unknown entity;
    ///   ``FetchPredicateError`` for a predicate or sort key that does not fit; the store's error.
    public func performFetch() throws {
        let context = managedObjectContext
        context.checkConfinement("FetchedResultsController.performFetch() of \(fetchRequest.entityName)")
        try checkRequest()
        if observers.isEmpty { startObserving() }
        context.drainMerges()
        context.processPendingChanges()
        let entries = try fetchEntries()
        rebuild(from: entries)
        hasFetched = true
    }

    private func checkRequest() throws {
        guard entity != nil else {
            throw StoreError(
                .invalidRequest,
                "a FetchedResultsController of '\(fetchRequest.entityName)': the model has no such entity")
        }
        guard let first = fetchRequest.sortKeys.first else {
            throw StoreError(
                .invalidRequest,
                "a FetchedResultsController needs sort keys: its fetch request of '\(fetchRequest.entityName)' has none (the sections and index paths follow them)"
            )
        }
        if let sectionNameKeyPath, sectionNameKeyPath != first.keyPath {
            throw StoreError(
                .invalidRequest,
                "a FetchedResultsController of '\(fetchRequest.entityName)': the section key path '\(sectionNameKeyPath)' must be the first sort key's key path (it is '\(first.keyPath)'), so each section is one run of the sorted objects; put SortKey(\"\(sectionNameKeyPath)\") first"
            )
        }
        if fetchRequest.fetchOffset != 0 || fetchRequest.fetchLimit != 0 {
            throw StoreError(
                .invalidRequest,
                "a FetchedResultsController of '\(fetchRequest.entityName)' keeps every matching object: remove fetchOffset and fetchLimit from its request"
            )
        }
    }

    /// The entries of a fresh fetch, in order.
    func fetchEntries() throws -> [ResultEntry] {
        let context = managedObjectContext
        storeOrder = Dictionary(
            uniqueKeysWithValues: context.coordinator.persistentStores.enumerated().map { (ObjectIdentifier($1), $0) })
        var request = fetchRequest
        request.resultType = .managedObject
        // A batch size keeps objects as faults: their sort values come from the fetched rows.
        if request.fetchBatchSize > 0, let rows = try context.sortedRowsIfUnchanged(request) {
            let faults = context.faults(
                for: rows.map { ($0.row.id, $0.store) }, size: request.fetchBatchSize,
                prefetching: request.relationshipKeyPathsForPrefetching)
            let model = context.coordinator.managedObjectModel
            var entries: [ResultEntry] = []
            entries.reserveCapacity(rows.count)
            for (object, item) in zip(faults, rows) {
                let view = RowView(
                    item.row, model: model, lookup: context.rowLookup(item.store),
                    related: context.relatedLookup(item.store))
                let key = try fetchRequest.sortKeys.map { try $0.value(of: view) }
                entries.append(
                    ResultEntry(object: object, key: key, tie: object.objectID.rowID, store: storeIndex(of: object)))
            }
            return entries
        }
        request.fetchBatchSize = 0
        let objects = try context.fetch(request)
        return try objects.map(entry(for:))
    }

    /// The entry of an object as it is now.
    func entry(for object: ManagedObject) throws -> ResultEntry {
        ResultEntry(
            object: object, key: try fetchRequest.sortKeys.map { try $0.value(of: object) }, tie: object.objectID.rowID,
            store: storeIndex(of: object))
    }

    private func storeIndex(of object: ManagedObject) -> Int {
        object.objectID.persistentStore.flatMap { storeOrder[ObjectIdentifier($0)] } ?? -1
    }

    /// Replaces the content with `entries` (in the fetch's order), in sections.
    ///
    /// - Complexity: O(n), plus O(n log n) for a section whose entries the stores ordered
    ///   differently from ``order`` (it is sorted).
    func rebuild(from entries: [ResultEntry]) {
        sectionList = []
        sectionsByName = [:]
        located = [:]
        flattened = nil
        var names: [String] = sectionNameKeyPath == nil ? [""] : []
        var grouped: [String: [ResultEntry]] = sectionNameKeyPath == nil ? ["": []] : [:]
        for entry in entries {
            let name = sectionName(of: entry)
            located[ObjectIdentifier(entry.object)] = Placement(section: name, entry: entry)
            if grouped[name] == nil {
                names.append(name)
                grouped[name] = []
            }
            grouped[name]!.append(entry)  // present: added just above when missing
        }
        let order = self.order
        for name in names {
            var list = grouped.removeValue(forKey: name) ?? []
            if zip(list, list.dropFirst()).contains(where: { !order.precedes($0, $1) }) {
                list.sort(by: order.precedes)
            }
            let storage = makeSection(name, OrderedEntries(sorted: list, precedes: order.precedes))
            sectionList.append(storage)
            sectionsByName[name] = storage
        }
        if sectionNameKeyPath != nil { sectionList.sort { precedes(sectionKey: $0, $1) } }
        #if STRATA_CHECKS
            checkInvariants()
        #endif
    }

    func makeSection(_ name: String, _ entries: OrderedEntries<ResultEntry>) -> SectionStorage {
        let title =
            delegate?.controller(self, sectionIndexTitleForSectionName: name) ?? sectionIndexTitle(forSectionName: name)
        return SectionStorage(name: name, indexTitle: title, entries: entries)
    }

    // MARK: Reading

    /// The objects, section after section; `nil` before ``performFetch()``.
    ///
    /// - Complexity: O(n) after a change, O(1) when nothing changed since the last call.
    public var fetchedObjects: [ManagedObject]? {
        managedObjectContext.checkConfinement("FetchedResultsController.fetchedObjects")
        guard hasFetched else { return nil }
        if let flattened { return flattened }
        let all = sectionList.flatMap { $0.entries.elements.map(\.object) }
        flattened = all
        return all
    }

    /// The sections; `nil` before ``performFetch()``. Without a section key path there is exactly
    /// one section, named `""`, even when it is empty.
    public var sections: [FetchedResultsSection]? {
        managedObjectContext.checkConfinement("FetchedResultsController.sections")
        guard hasFetched else { return nil }
        return sectionList.map(FetchedResultsSection.init(storage:))
    }

    /// The sections' index titles, in order, each once.
    public var sectionIndexTitles: [String] {
        var titles: [String] = []
        for section in sectionList {
            if let title = section.indexTitle, titles.last != title, !title.isEmpty { titles.append(title) }
        }
        return titles
    }

    /// The default index title of a section: its name's first letter, capitalized (Core Data's
    /// `sectionIndexTitle(forSectionName:)`); the delegate may give its own.
    public func sectionIndexTitle(forSectionName sectionName: String) -> String? {
        sectionName.first.map { String($0).uppercased() } ?? ""
    }

    /// The index of the first section whose index title is `title` (Core Data's
    /// `section(forSectionIndexTitle:at:)`); the position in ``sectionIndexTitles`` when none has it.
    public func section(forSectionIndexTitle title: String, at sectionIndex: Int) -> Int {
        sectionList.firstIndex { $0.indexTitle == title } ?? sectionIndex
    }

    /// The object at an index path: section, then row (Core Data's `object(at:)`).
    ///
    /// Index paths have two indexes, the section and the row: `IndexPath(indexes: [section, row])`,
    /// or `IndexPath(row:section:)` (UIKit's, and Strata's on Linux).
    /// An index path outside the results stops the program, as an array index would.
    public func object(at indexPath: IndexPath) -> ManagedObject {
        managedObjectContext.checkConfinement("FetchedResultsController.object(at:)")
        // Misuse no valid program commits: index paths come from the controller's own sections.
        precondition(
            indexPath.count == 2, "FetchedResultsController.object(at:) takes [section, row], got \(indexPath)")
        precondition(
            indexPath[0] >= 0 && indexPath[0] < sectionList.count,
            "no section \(indexPath[0]) (there are \(sectionList.count))")
        let section = sectionList[indexPath[0]]
        precondition(
            indexPath[1] >= 0 && indexPath[1] < section.entries.count,
            "no row \(indexPath[1]) in section \(indexPath[0]) (it has \(section.entries.count))")
        return section.entries[indexPath[1]].object
    }

    /// The index path of an object, or `nil` when it is not among the results.
    ///
    /// - Complexity: O(log n) comparisons, plus O(log s) for s sections.
    public func indexPath(forObject object: ManagedObject) -> IndexPath? {
        managedObjectContext.checkConfinement("FetchedResultsController.indexPath(forObject:)")
        guard let placement = located[ObjectIdentifier(object)] else { return nil }
        return indexPath(of: placement)
    }

    /// The results as IDs, for comparing or for a diffable data source.
    ///
    /// - Complexity: O(n).
    public var snapshot: FetchedResultsSnapshot {
        FetchedResultsSnapshot(
            sectionIdentifiers: sectionList.map(\.name),
            itemIdentifiersBySection: sectionList.map { $0.entries.elements.map(\.object.objectID) })
    }

    /// The controller's updates as an `AsyncSequence` of `Sendable` values, from now on, until the
    /// consumer stops or the controller is gone.
    public func updates() -> AsyncStream<FetchedResultsUpdate> {
        streams.make()
    }

    // MARK: Order

    /// The order of entries within a section.
    var order: EntryOrder { EntryOrder(keys: fetchRequest.sortKeys) }

    /// Whether section `a` comes before section `b`: by the first sort key's value of their first
    /// entries, then by name (F2).
    func precedes(sectionKey a: SectionStorage, _ b: SectionStorage) -> Bool {
        guard a.entries.count > 0, b.entries.count > 0 else { return a.entries.count > 0 }
        return precedes(sectionValue: a.entries[0].key[0], a.name, b.entries[0].key[0], b.name)
    }

    func precedes(sectionValue a: StoreValue, _ aName: String, _ b: StoreValue, _ bName: String) -> Bool {
        // Values of one key path order; a mismatch (impossible for one attribute) counts as equal.
        let order = (try? fetchRequest.sortKeys[0].compareValues(a, b)) ?? .orderedSame
        if order != .orderedSame { return order == .orderedAscending }
        return aName.utf8.lexicographicallyPrecedes(bName.utf8)
    }

    /// The section an entry belongs to.
    func sectionName(of entry: ResultEntry) -> String {
        guard sectionNameKeyPath != nil else { return "" }
        return Self.sectionName(
            for: entry.key[0], model: managedObjectContext.coordinator.managedObjectModel, object: entry.object)
    }

    /// A section key path's value as a section name: strings as they are, numbers and Booleans as
    /// `NSNumber` prints them, dates as `NSDate` does (`2024-05-01 09:00:00 +0000`), related
    /// objects as their ID's URI, `nil` as `""`.
    static func sectionName(for value: StoreValue, model: ManagedObjectModel, object: ManagedObject) -> String {
        switch value {
        case .null, .unfetched, .references: return ""
        case .string(let s): return s
        case .integer(let n): return String(n)
        case .double(let d): return d.rounded() == d && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        case .decimal(let d): return d.description
        case .bool(let b): return b ? "1" : "0"
        case .date(let date): return sectionDateFormatter.string(from: date)
        case .binary(let data): return data.base64EncodedString()
        case .uuid(let u): return u.uuidString
        case .uri(let u): return u.absoluteString
        case .reference(let id):
            guard let entity = model.entity(number: id.entity) else { return "\(id)" }
            let store = object.objectID.persistentStore
            return ManagedObjectID(entity: entity, rowID: id, store: id.primaryKey > 0 ? store : nil)
                .uriRepresentation().absoluteString
        }
    }

    /// The index path of a placed object.
    func indexPath(of placement: Placement) -> IndexPath? {
        guard let section = sectionsByName[placement.section], let row = section.entries.index(of: placement.entry),
            let sectionIndex = sectionIndex(of: section)
        else { return nil }
        return IndexPath(indexes: [sectionIndex, row])
    }

    /// The index of a section in the list.
    ///
    /// - Complexity: O(log s).
    func sectionIndex(of section: SectionStorage) -> Int? {
        guard sectionNameKeyPath != nil else { return sectionList.isEmpty ? nil : 0 }
        var low = 0
        var high = sectionList.count
        while low < high {
            let middle = (low + high) / 2
            if sectionList[middle] === section { return middle }
            if precedes(sectionKey: sectionList[middle], section) { low = middle + 1 } else { high = middle }
        }
        return low < sectionList.count && sectionList[low] === section ? low : sectionList.firstIndex { $0 === section }
    }

    /// Forgets the flattened object list after a change.
    func contentChanged() { flattened = nil }

    #if STRATA_CHECKS
        /// Checks F1 and F2.
        func checkInvariants() {
            var total = 0
            for (index, section) in sectionList.enumerated() {
                section.entries.checkInvariants()
                precondition(sectionsByName[section.name] === section, "F1: section '\(section.name)' is not indexed")
                precondition(
                    section.entries.count > 0 || sectionNameKeyPath == nil, "F2: empty section '\(section.name)'")
                if index > 0 {
                    precondition(precedes(sectionKey: sectionList[index - 1], section), "F2: sections out of order")
                }
                for entry in section.entries.elements {
                    precondition(
                        located[ObjectIdentifier(entry.object)]?.section == section.name, "F1: an entry is not located")
                }
                total += section.entries.count
            }
            precondition(total == located.count, "F1: located holds \(located.count), sections \(total)")
        }
    #endif
}

/// How entries order within a section: by the sort keys, then by row ID and store, as a fetch
/// orders ties. A value, so the sections' lists hold no reference to their controller.
struct EntryOrder {
    let keys: [SortKey]

    func precedes(_ a: ResultEntry, _ b: ResultEntry) -> Bool {
        for (index, key) in keys.enumerated() {
            // Values of one key path order; a mismatch (impossible for one attribute) counts as equal.
            let order = (try? key.compareValues(a.key[index], b.key[index])) ?? .orderedSame
            if order != .orderedSame { return order == .orderedAscending }
        }
        if a.tie != b.tie { return a.tie < b.tie }
        return a.store < b.store
    }
}

/// NSDate's description format, for section names of dates.
private let sectionDateFormatter: DateFormatter = {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
    return formatter
}()

/// The continuations of a controller's update streams.
final class UpdateStreams: Sendable {
    private let continuations = Locked<[UInt64: AsyncStream<FetchedResultsUpdate>.Continuation]>([:])
    private let next = Locked<UInt64>(0)

    func make() -> AsyncStream<FetchedResultsUpdate> {
        let key = next.withLock { value -> UInt64 in
            value += 1
            return value
        }
        let (stream, continuation) = AsyncStream<FetchedResultsUpdate>.makeStream(bufferingPolicy: .unbounded)
        continuations.withLock { $0[key] = continuation }
        continuation.onTermination = { [weak self] _ in _ = self?.continuations.withLock { $0.removeValue(forKey: key) }
        }
        return stream
    }

    var isEmpty: Bool { continuations.withLock { $0.isEmpty } }

    func yield(_ update: FetchedResultsUpdate) {
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.yield(update) }
    }

    func finishAll() {
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.finish() }
    }
}
