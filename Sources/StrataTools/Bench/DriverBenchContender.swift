import Foundation
import Strata

/// One Strata driver called directly through the driver protocol (``StoreDriver``): no
/// coordinator, no contexts, no managed objects, no row cache. It measures what the driver itself
/// costs, for comparison with the raw engine underneath it (the driver-level targets in
/// docs/benchmarks.md).
///
/// The store is opened with the store type's factory
/// (`type.factory.makeDriver(StoreOpenRequest(...))`) and its metadata written the way the
/// coordinator writes it for a new store (version hashes and the embedded model), outside the
/// timings. Rows are ``RowSnapshot``s with values in the model's slot order.
///
/// - W1: ``StoreDriver/allocatePrimaryKeys(forEntity:count:)`` and one ``StoreDriver/apply(_:)``
///   with N inserts (building the snapshots is part of the work).
/// - W2: one ``StoreDriver/fetch(_:)`` of every `Item` row.
/// - W3: one ``StoreDriver/rows(for:)`` per looked-up id; warm simply repeats (no row cache here).
/// - W4: one fetch with `age BETWEEN {30, 40}` sorted by `name`; whatever the driver did not apply
///   (``StoreFetchResult``) is finished here the way the core would, with ``CompiledRowPredicate``
///   and ``RowSorter``.
/// - W5: one ``StoreDriver/execute(_:)`` of a batch update `score = score + 1` over every row
///   (what the raw engine does: read each row, write it back changed, in one transaction).
/// - W6: one ``StoreDriver/execute(_:)`` of a batch delete of every row.
/// - W7: parents fetched; children from the parent rows' to-many slot or
///   ``StoreDriver/relatedRows(_:)``, then ``StoreDriver/rows(for:)``: per parent without
///   prefetching, once for all parents with it.
/// - W8: ``loadForChange(_:)`` reads the 10 rows; the timed part is one apply of 10 updates.
///
/// Thread safety: not `Sendable`; the runner uses it from one thread.
public final class DriverBenchContender: BenchContender {
    /// The driver measured.
    public let kind: KnownDriver
    private let type: StoreType
    private let model: ManagedObjectModel
    private let item: EntityDescription
    private let parent: EntityDescription
    private let child: EntityDescription
    /// `Item` slots: id, name, email, age, score, created.
    private let slots: [Int]
    private let parentSlots: (number: Int, name: Int, children: Int)
    private let childSlots: (value: Int, name: Int, parent: Int)
    private let filter: FetchPredicate
    private let compiledFilter: CompiledRowPredicate
    /// W5's `score + 1`.
    private let raiseScore: FetchExpression
    private var driver: (any StoreDriver)?
    /// The primary key of row id 1; W1's keys are one contiguous range, so row `id` has key
    /// `firstKey + id - 1`.
    private var firstKey: Int64 = 0
    /// W8: the rows loaded by `loadForChange`.
    private var changeRows: [RowSnapshot] = []
    /// The open store's location (a server's store is removed when it closes).
    private var location: URL?

    /// The durability the store is opened with, when not the driver kind's (``KnownDriver/storeOptions``).
    public let durability: BenchDurability?

    /// Creates the contender, or `nil` when `kind`'s driver is not linked into this build.
    ///
    /// - Parameter durability: store options over ``KnownDriver/storeOptions``; the contender is
    ///   then named `driver-<driver>-<name>` and reports the durability's settings.
    public init?(kind: KnownDriver, durability: BenchDurability? = nil) throws {
        guard let type = kind.storeType, kind.unavailableReason == nil else { return nil }
        self.kind = kind
        self.type = type
        self.durability = durability
        let model = try BenchModel.make()
        self.model = model
        func entity(_ name: String) throws -> EntityDescription {
            guard let entity = model.entity(named: name) else { throw BenchError("the bench model has no \(name)") }
            return entity
        }
        func slot(_ entity: EntityDescription, _ name: String) throws -> Int {
            guard let slot = entity.index(ofProperty: name) else { throw BenchError("\(entity.name) has no \(name)") }
            return slot
        }
        let item = try entity("Item")
        let parent = try entity("Parent")
        let child = try entity("Child")
        self.item = item
        self.parent = parent
        self.child = child
        slots = try ["id", "name", "email", "age", "score", "created"].map { try slot(item, $0) }
        parentSlots = (try slot(parent, "number"), try slot(parent, "name"), try slot(parent, "children"))
        childSlots = (try slot(child, "value"), try slot(child, "name"), try slot(child, "parent"))
        let range = BenchDataset.ageRange
        let filter = try FetchPredicate(format: "age BETWEEN {%d, %d}", Int(range.lowerBound), Int(range.upperBound))
        self.filter = filter
        guard let compiled = CompiledRowPredicate(filter, entity: item) else {
            throw BenchError("W4's predicate does not compile to a row predicate")
        }
        compiledFilter = compiled
        raiseScore = try FetchExpression(format: "score + 1")
    }

    public var id: String { "driver-\(kind.rawValue)" + (durability.map { "-\($0.name)" } ?? "") }
    public var engine: String { kind.engine }
    public var settings: String {
        (durability?.settings ?? kind.settings)
            + "; the driver protocol called directly (no coordinator, contexts or row cache)"
    }

    public func open(in directory: URL) throws {
        let url = kind.location(in: directory)
        location = url
        let request = StoreOpenRequest(
            url: url, model: model, configuration: nil, options: kind.storeOptions(durability))
        let driver = try type.factory.makeDriver(request)
        // What the coordinator writes when it attaches a new store.
        var metadata = try driver.loadMetadata()
        if metadata.entityVersionHashes.isEmpty {
            metadata.entityVersionHashes = Dictionary(
                uniqueKeysWithValues: model.entities.map { ($0.name, $0.versionHash) })
            metadata.values[StoreMetadata.modelVersionHashKey] = .data(model.versionHash)
            metadata.values[StoreMetadata.modelKey] = .data(try model.encodedRepresentation())
            try driver.saveMetadata(metadata)
        }
        self.driver = driver
        firstKey = 0
        changeRows = []
    }

    public func close() throws {
        changeRows = []
        try driver?.close()
        driver = nil
        try kind.removeStore(at: location)
        location = nil
    }

    private func store() throws -> any StoreDriver {
        guard let driver else { throw BenchError("\(id): no store is open") }
        return driver
    }

    private func rowID(_ id: Int64) -> RowID { RowID(entity: item.entityNumber, primaryKey: firstKey + id - 1) }

    private func checksum(_ values: [StoreValue]) -> Int64 {
        guard case .integer(let id) = values[slots[0]], case .string(let name) = values[slots[1]],
            case .string(let email) = values[slots[2]], case .integer(let age) = values[slots[3]],
            case .double(let score) = values[slots[4]], case .date(let created) = values[slots[5]]
        else { return 0 }  // a wrong value makes the checksum differ, and the runner reports it
        return BenchChecksum.row(
            id: id, nameBytes: name.utf8.count, emailBytes: email.utf8.count, age: age, score: score,
            created: created.timeIntervalSinceReferenceDate)
    }

    public func insert(_ rows: ArraySlice<BenchRow>) throws -> BenchOutcome {
        let driver = try store()
        let keys = try driver.allocatePrimaryKeys(forEntity: item.entityNumber, count: rows.count)
        guard keys.count >= rows.count else {
            throw BenchError("\(id): asked for \(rows.count) keys, got \(keys.count)")
        }
        var batch = ChangeBatch()
        batch.inserts.reserveCapacity(rows.count)
        let width = item.properties.count
        var key = keys.lowerBound
        for row in rows {
            var values = [StoreValue](repeating: .null, count: width)
            values[slots[0]] = .integer(row.id)
            values[slots[1]] = .string(row.name)
            values[slots[2]] = .string(row.email)
            values[slots[3]] = .integer(Int64(row.age))
            values[slots[4]] = .double(row.score)
            values[slots[5]] = .date(row.created)
            batch.inserts.append(
                RowSnapshot(id: RowID(entity: item.entityNumber, primaryKey: key), version: 1, values: values))
            key += 1
        }
        _ = try driver.apply(batch)
        firstKey = keys.lowerBound - (rows.first?.id ?? 1) + 1
        return BenchOutcome(rows: rows.count)
    }

    public func fetchAll() throws -> BenchOutcome {
        let rows = try store().fetch(StoreFetch(entity: item)).rows
        var sum: Int64 = 0
        for row in rows { sum = sum &+ checksum(row.values) }
        return BenchOutcome(rows: rows.count, checksum: sum)
    }

    public func lookUp(_ ids: [Int64], warm: Bool) throws -> BenchOutcome {
        let driver = try store()
        var sum: Int64 = 0
        var found = 0
        for id in ids {
            for row in try driver.rows(for: [rowID(id)]) {
                sum = sum &+ checksum(row.values)
                found += 1
            }
        }
        return BenchOutcome(rows: found, checksum: sum)
    }

    public func fetchFiltered(ages: ClosedRange<Int32>) throws -> BenchOutcome {
        guard ages == BenchDataset.ageRange else {
            throw BenchError("\(id): W4 is prepared for ages \(BenchDataset.ageRange)")
        }
        let driver = try store()
        var request = StoreFetch(entity: item)
        request.predicate = filter
        request.sort = [SortKey("name")]
        let result = try driver.fetch(request)
        var rows = result.rows
        if !result.appliedPredicate { rows = try rows.filter { try compiledFilter.matches($0.values) } }
        if !result.appliedSort {
            rows = try RowSorter.sort(rows, by: request.sort, model: model) { try driver.rows(for: [$0]).first }
        }
        var sum: Int64 = 0
        for (i, row) in rows.enumerated() {
            guard case .integer(let rowID) = row.values[slots[0]] else { continue }
            sum = sum &+ checksum(row.values) &+ BenchChecksum.ordered(position: i, id: rowID)
        }
        return BenchOutcome(rows: rows.count, checksum: sum)
    }

    public func updateAll() throws -> BenchOutcome {
        let request = StoreBatchRequest(
            model: model, entity: item,
            action: .update([StoreBatchRequest.Assignment(slot: slots[4], expression: raiseScore)]))
        return BenchOutcome(rows: try store().execute(request).ids.count)
    }

    public func deleteAll() throws -> BenchOutcome {
        let request = StoreBatchRequest(model: model, entity: item, action: .delete)
        return BenchOutcome(rows: try store().execute(request).ids.count)
    }

    public func loadForChange(_ ids: [Int64]) throws {
        changeRows = try store().rows(for: ids.map(rowID))
    }

    public func saveChanged() throws -> BenchOutcome {
        let driver = try store()
        let ageSlot = slots[3]
        var batch = ChangeBatch()
        for row in changeRows {
            var values = row.values
            guard case .integer(let age) = values[ageSlot] else { throw BenchError("\(id): row \(row.id) has no age") }
            values[ageSlot] = .integer(age + 1)
            batch.updates.append(
                RowUpdate(id: row.id, expectedVersion: row.version, values: values, changedSlots: [ageSlot]))
        }
        _ = try driver.apply(batch)
        return BenchOutcome(rows: batch.updates.count)
    }

    public func insertGraph(_ dataset: BenchDataset) throws {
        let driver = try store()
        let parents = dataset.parents
        let perParent = dataset.childrenPerParent
        guard parents > 0 else { return }
        let parentKeys = try driver.allocatePrimaryKeys(forEntity: parent.entityNumber, count: parents)
        let childKeys = try driver.allocatePrimaryKeys(
            forEntity: child.entityNumber, count: max(parents * perParent, 1))
        var batch = ChangeBatch()
        for p in 0..<parents {
            let parentID = RowID(entity: parent.entityNumber, primaryKey: parentKeys.lowerBound + Int64(p))
            var childIDs: [RowID] = []
            for c in 0..<perParent {
                let index = p * perParent + c
                let childID = RowID(entity: child.entityNumber, primaryKey: childKeys.lowerBound + Int64(index))
                var values = [StoreValue](repeating: .null, count: child.properties.count)
                values[childSlots.value] = .integer(Int64(index + 1))
                values[childSlots.name] = .string("child-\(index + 1)")
                values[childSlots.parent] = .reference(parentID)
                batch.inserts.append(RowSnapshot(id: childID, version: 1, values: values))
                childIDs.append(childID)
            }
            var values = [StoreValue](repeating: .null, count: parent.properties.count)
            values[parentSlots.number] = .integer(Int64(p + 1))
            values[parentSlots.name] = .string("parent-\(p + 1)")
            values[parentSlots.children] = .references(childIDs)
            batch.inserts.append(RowSnapshot(id: parentID, version: 1, values: values))
        }
        _ = try driver.apply(batch)
    }

    public func walkGraph(prefetch: Bool) throws -> BenchOutcome {
        let driver = try store()
        let parents = try driver.fetch(StoreFetch(entity: parent)).rows
        let slot = parentSlots.children
        var sum: Int64 = 0
        var count = 0
        func visit(_ number: Int64, _ children: [RowSnapshot]) {
            for row in children {
                guard case .integer(let value) = row.values[childSlots.value] else { continue }
                sum = sum &+ BenchChecksum.child(parent: number, value: value)
                count += 1
            }
        }
        func number(_ row: RowSnapshot) -> Int64 {
            if case .integer(let n) = row.values[parentSlots.number] { return n }
            return 0
        }
        if prefetch {
            var members: [RowID: [RowID]] = [:]
            var unfetched: [RowID] = []
            for row in parents {
                if case .references(let ids) = row.values[slot] {
                    members[row.id] = ids
                } else {
                    unfetched.append(row.id)
                }
            }
            if !unfetched.isEmpty {
                members.merge(
                    try driver.relatedRows(RelatedRowsRequest(entity: parent, slot: slot, sources: unfetched))
                ) { a, _ in a }
            }
            let children = try driver.rows(for: parents.flatMap { members[$0.id] ?? [] })
            let byID = Dictionary(children.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            for row in parents { visit(number(row), (members[row.id] ?? []).compactMap { byID[$0] }) }
        } else {
            for row in parents {
                let ids: [RowID]
                if case .references(let refs) = row.values[slot] {
                    ids = refs
                } else {
                    ids =
                        try driver.relatedRows(RelatedRowsRequest(entity: parent, slot: slot, sources: [row.id]))[
                            row.id] ?? []
                }
                visit(number(row), try driver.rows(for: ids))
            }
        }
        return BenchOutcome(rows: count, checksum: sum)
    }
}
