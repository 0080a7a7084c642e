import CLMDB
import Foundation
import Strata

extension LMDBDriver {
    /// Answers a fetch completely inside one read transaction: candidates from an index, the
    /// reverse entries of a to-one key or a scan; the predicate evaluated on each row by the core's
    /// evaluator (exact); sorts streamed from an index when one fits, else sorted by ``RowSorter``;
    /// then the page. Counts without a predicate read no row bodies.
    public func fetch(_ request: StoreFetch) throws -> StoreFetchResult {
        try ensureOpen()
        let entities = request.entityNumbers.filter { layout.slots[$0] != nil }
        return try environment.read { txn in
            let reader = RowReader(driver: self, txn: txn)
            if request.predicate == nil, request.resultKind == .count, request.offset == 0, request.limit == nil {
                return StoreFetchResult(
                    count: try countRows(entities, txn), appliedPredicate: true, appliedSort: true, appliedPage: true)
            }
            let plan = QueryPlan.make(request.predicate, entity: request.entity, entities: entities, layout: layout)
            // IDs in row-ID order: read from the keys alone when every row is wanted; otherwise
            // matching rows keep no values (a large result of IDs holds no rows).
            let idsOnly = request.resultKind == .ids && request.sort.isEmpty
            if idsOnly, request.predicate == nil, case .scan = plan {
                let ids = try scanIDs(entities, reader.txn, offset: request.offset, limit: request.limit)
                return StoreFetchResult(ids: ids, appliedPredicate: true, appliedSort: true, appliedPage: true)
            }
            var rows: [RowSnapshot]
            if case .scan = plan, let streamed = try streamSorted(request, entities: entities, reader: reader) {
                rows = streamed
            } else {
                rows = try candidates(
                    plan, entities: entities, reader: reader, predicate: request.predicate, entity: request.entity,
                    cached: request.cachedRows, idsOnly: idsOnly)
                if !request.sort.isEmpty {
                    rows = try RowSorter.sort(rows, by: request.sort, model: model, lookup: reader.lookup)
                }
                if request.offset > 0 || request.limit != nil {
                    rows = Array(rows.dropFirst(request.offset).prefix(request.limit ?? Int.max))
                }
            }
            switch request.resultKind {
            case .rows:
                return StoreFetchResult(rows: rows, appliedPredicate: true, appliedSort: true, appliedPage: true)
            case .ids:
                return StoreFetchResult(
                    ids: rows.map(\.id), appliedPredicate: true, appliedSort: true, appliedPage: true)
            case .count:
                return StoreFetchResult(count: rows.count, appliedPredicate: true, appliedSort: true, appliedPage: true)
            }
        }
    }

    /// Counts the rows of `entities` from keys alone (a database's entry count when it covers the
    /// whole rows database).
    private func countRows(_ entities: Set<Int32>, _ txn: LMDBTransaction) throws -> Int {
        var total = 0
        var byRoot: [Int32: Set<Int32>] = [:]
        for entity in entities { if let root = layout.rootOf[entity] { byRoot[root, default: []].insert(entity) } }
        for (root, members) in byRoot {
            // Every root of the layout has a rows database.
            let dbi = databases.rows[root]!
            let hierarchy = Set(layout.rootOf.filter { $0.value == root }.keys)
            if members == hierarchy {
                total += try txn.count(dbi)
                continue
            }
            for entity in members {
                try txn.withCursor(dbi) { cursor in
                    var entry = try cursor.move(MDB_SET_RANGE, to: Keys.entityStart(entity))
                    let prefix = Keys.entityPrefix(entity)
                    while let current = entry, current.key.hasPrefix(prefix) {
                        total += 1
                        entry = try cursor.move(MDB_NEXT)
                    }
                }
            }
        }
        return total
    }

    /// The IDs of every row of `entities`, in row-ID order, paged, read from the keys alone.
    private func scanIDs(_ entities: Set<Int32>, _ txn: LMDBTransaction, offset: Int, limit: Int?) throws
        -> [RowID]
    {
        var ids: [RowID] = []
        var skip = offset
        let wanted = limit ?? Int.max
        for entity in entities.sorted() where ids.count < wanted {
            let dbi = try rowsDatabase(entity)
            if layout.roots[entity] != nil, entities.count == 1, limit == nil {
                ids.reserveCapacity(max(try txn.count(dbi) - offset, 0))
            }
            let prefix = Array(Keys.entityStart(entity).prefix(4))
            try txn.withCursor(dbi) { cursor in
                var entry = try cursor.move(MDB_SET_RANGE, to: Keys.entityStart(entity))
                while let current = entry, current.key.hasPrefix(prefix), ids.count < wanted {
                    if skip > 0 {
                        skip -= 1
                    } else {
                        ids.append(try rowID(current.key))
                    }
                    entry = try cursor.move(MDB_NEXT)
                }
            }
        }
        return ids
    }

    /// The rows the plan names that satisfy `predicate`, in row-ID order.
    ///
    /// A scan takes a row's values from `cached` when the row cache holds that row at its stored
    /// version (read from the row's header, before any field), as the SQLite driver does. With
    /// `idsOnly`, the rows kept have no values (their IDs are all the caller wants).
    private func candidates(
        _ plan: QueryPlan, entities: Set<Int32>, reader: RowReader, predicate: FetchPredicate?,
        entity: EntityDescription,
        cached: CachedRows?, idsOnly: Bool = false
    ) throws -> [RowSnapshot] {
        var rows: [RowSnapshot] = []
        // Asks the row cache row by row, less while it finds little (CachedRows.Probe).
        var probe = cached.map(CachedRows.Probe.init)
        // Predicates over the row's own attributes read value slots directly (same answers).
        let compiled = predicate.flatMap { CompiledRowPredicate($0, entity: entity) }
        // Takes the rows array as a parameter: a closure capturing it would box it, and every
        // append would then pay for the box.
        func consider(_ row: RowSnapshot, into rows: inout [RowSnapshot]) throws {
            if let compiled {
                if !(try compiled.matches(row.values)) { return }
            } else if let predicate, !(try predicate.evaluate(with: reader.view(row))) {
                return
            }
            keep(row, into: &rows)
        }
        func keep(_ row: RowSnapshot, into rows: inout [RowSnapshot]) {
            rows.append(idsOnly ? RowSnapshot(id: row.id, version: row.version, values: []) : row)
        }
        switch plan {
        case .scan:
            for entity in entities.sorted() {
                // entities holds numbers of the layout only.
                let slots = layout.slots[entity]!
                let plan = layout.plans[entity]!
                let dbi = try rowsDatabase(entity)
                let prefix = Keys.entityPrefix(entity)
                // A predicate over the row's own attributes is tested on those fields alone; only
                // matching rows are decoded whole.
                var fields = RowCodec.Fields(layout: slots, wanted: compiled?.readSlots ?? [])
                let integerTest = compiled?.integerComparison
                // Without a predicate every row of the database is taken: make room once.
                if predicate == nil, layout.roots[entity] != nil, entities.count == 1 {
                    rows.reserveCapacity(try reader.txn.count(dbi))
                }
                try reader.txn.withCursor(dbi) { cursor in
                    var entry = try cursor.move(MDB_SET_RANGE, to: Keys.entityStart(entity))
                    while let current = entry, current.key.hasPrefix(prefix) {
                        if let integerTest, let value = plan.integer(at: integerTest.slot, in: current.value) {
                            // One integer comparison: answered from the stored bytes.
                            if integerTest.matches(value) {
                                keep(
                                    try decode(current.value, id: try rowID(current.key), plan: plan, cached: &probe),
                                    into: &rows)
                            }
                        } else if let compiled {
                            if !plan.probe(
                                current.value, wanted: fields.wanted, last: fields.lastWanted, into: &fields.values)
                            {
                                do {
                                    try RowCodec.read(current.value, layout: slots, into: &fields, complete: false)
                                } catch let error as FormatError {
                                    // The key only names the row in the message; a malformed key shows as "?".
                                    throw StoreError(
                                        .corrupt,
                                        "row \((try? rowID(current.key))?.description ?? "?") is malformed (\(error)); restore the store from a backup",
                                        store: storeName)
                                }
                            }
                            if try compiled.matches(fields.values) {
                                keep(
                                    try decode(current.value, id: try rowID(current.key), plan: plan, cached: &probe),
                                    into: &rows)
                            }
                        } else {
                            try consider(
                                try decode(current.value, id: try rowID(current.key), plan: plan, cached: &probe),
                                into: &rows)
                        }
                        entry = try cursor.move(MDB_NEXT)
                    }
                }
            }
            return rows
        case .referrers(let rel, let target):
            let ids = try duplicates(databases.refs, Keys.relationship(rel, target), reader.txn).filter {
                entities.contains($0.entity)
            }
            for id in ids.sorted() { if let row = try reader.lookup(id) { try consider(row, into: &rows) } }
            return rows
        case .index(let index, let ranges):
            var ids = Set<RowID>()
            try reader.txn.withCursor(databases.index) { cursor in
                for range in ranges {
                    var entry = try cursor.move(MDB_SET_RANGE, to: range.start)
                    while let current = entry,
                        current.key.compare(range.through) <= 0 || current.key.hasPrefix(range.through)
                    {
                        let id = try rowID(current.value)
                        if entities.contains(id.entity) { ids.insert(id) }
                        entry = try cursor.move(MDB_NEXT)
                    }
                }
            }
            _ = index
            for id in ids.sorted() { if let row = try reader.lookup(id) { try consider(row, into: &rows) } }
            return rows
        }
    }

    /// Streams rows in the order of a single-attribute index when the first sort key is that
    /// attribute (default comparison) and a page is asked for: groups of equal keys are sorted by
    /// every sort key and emitted until the page is full. `nil` when no index fits.
    private func streamSorted(_ request: StoreFetch, entities: Set<Int32>, reader: RowReader) throws -> [RowSnapshot]? {
        guard let first = request.sort.first, first.comparison == .default, request.limit != nil,
            let slot = request.entity.index(ofProperty: first.keyPath),  // composite elements included
            case .attribute = layout.slots[request.entity.entityNumber]?[slot],
            let index = layout.indexes.first(where: { $0.slots == [slot] && entities.isSubset(of: $0.entities) })
        else { return nil }
        let wanted = request.offset + (request.limit ?? 0)
        let prefix = Keys.indexPrefix(index.id)
        var next = prefix
        next[3] &+= 1  // the index ids are small; the next id's prefix bounds this index
        var result: [RowSnapshot] = []
        try reader.txn.withCursor(databases.index) { cursor in
            var entry: LMDBCursor.Entry?
            if first.ascending {
                entry = try cursor.move(MDB_SET_RANGE, to: prefix)
            } else {
                entry =
                    try cursor.move(MDB_SET_RANGE, to: next) != nil
                    ? try cursor.move(MDB_PREV) : try cursor.move(MDB_LAST)
            }
            var group: [RowSnapshot] = []
            var groupKey: [UInt8]?
            func flush() throws {
                if group.count > 1 {
                    group = try RowSorter.sort(group, by: request.sort, model: model, lookup: reader.lookup)
                }
                result += group
                group = []
            }
            while let current = entry, current.key.hasPrefix(prefix) {
                let key = Array(current.key)
                if key != groupKey {
                    try flush()
                    if result.count >= wanted { break }
                    groupKey = key
                }
                let id = try rowID(current.value)
                if entities.contains(id.entity), let row = try reader.lookup(id) {
                    if try request.predicate?.evaluate(with: reader.view(row)) ?? true { group.append(row) }
                }
                entry = try cursor.move(first.ascending ? MDB_NEXT : MDB_PREV)
            }
            try flush()
        }
        return Array(result.dropFirst(request.offset).prefix(request.limit ?? Int.max))
    }

    /// A row ID read from a key or value of the file, checked (``checkKey(_:)``).
    func rowID(_ raw: UnsafeRawBufferPointer) throws -> RowID {
        let id: RowID
        do { id = try Keys.rowID(raw) } catch {
            throw StoreError(
                .corrupt, "a key is malformed (\(error)); restore the store from a backup", store: storeName)
        }
        return try checkKey(id)
    }
}

/// Reads rows inside one read transaction for the evaluator and sorter, decoding each row once.
///
/// Lifetime: only inside the transaction's closure (it holds the transaction).
final class RowReader {
    let driver: LMDBDriver
    let txn: LMDBTransaction
    private var cache: [RowID: RowSnapshot?] = [:]

    init(driver: LMDBDriver, txn: LMDBTransaction) {
        self.driver = driver
        self.txn = txn
    }

    /// The row of `id`, or `nil`.
    func lookup(_ id: RowID) throws -> RowSnapshot? {
        if let known = cache[id] { return known }
        let row = try driver.row(id, txn)
        cache[id] = row
        return row
    }

    /// A view of `row` for the evaluator, walking relationships in this transaction.
    func view(_ row: RowSnapshot) -> RowView {
        RowView(
            row, model: driver.model, lookup: { [unowned self] in try self.lookup($0) },
            related: { [unowned self] id, slot in try self.driver.members(of: id, slot: slot, self.txn) })
    }
}
