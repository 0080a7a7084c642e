import CSQLite
import Foundation
import Strata

extension SQLiteDriver {
    /// The most keys bound in one `IN (…)` list (fault fulfilment and to-many loads go in chunks).
    static let chunkSize = 500

    /// Rows handed over at a time by ``fetch(_:inParts:)``.
    static let fetchPart = 256

    public func fetch(_ request: StoreFetch) throws -> StoreFetchResult {
        var answer: StoreFetchResult?
        try fetch(request, partSize: .max) { answer = $0 }
        // `fetch(_:partSize:_:)` hands over at least one part.
        return answer!
    }

    public func fetch(_ request: StoreFetch, inParts body: (inout StoreFetchResult) throws -> Void) throws {
        try fetch(request, partSize: Self.fetchPart, body)
    }

    /// Answers a fetch, handing rows to `body` every `partSize` rows and the rest (or the IDs or
    /// count) in a last part. The statement is reset when `body` throws, so the read connection
    /// does not stay on an old snapshot.
    private func fetch(_ request: StoreFetch, partSize: Int, _ body: (inout StoreFetchResult) throws -> Void) throws {
        if let aggregation = request.aggregation, request.resultKind == .rows,
            let groups = try aggregate(request, aggregation)
        {
            var answer = StoreFetchResult(
                appliedPredicate: true, appliedSort: false, appliedPage: false, groups: groups)
            return try body(&answer)
        }
        guard let entityLayout = layout.entity(request.entity.entityNumber),
            let table = layout.tables[request.entity.rootEntityName]
        else {
            // The entity is not stored here (another configuration): nothing matches.
            var nothing = StoreFetchResult(
                rows: [], ids: [], count: 0, appliedPredicate: true, appliedSort: true, appliedPage: true)
            return try body(&nothing)
        }
        var translator = QueryTranslator(layout: layout, maximumBindings: parameterLimit)
        let numbers = layout.storeNumbers(request.entityNumbers)
        var clauses: [String] = []
        var exact = true
        if let predicate = request.predicate {
            let (sql, isExact) = translator.whereClause(predicate, entityLayout.entity, "t0")
            if let sql { clauses.append(sql) }
            exact = isExact
        }
        let paged = request.limit != nil || request.offset != 0
        // The Z_ENT test comes after the predicate, which usually rules out more rows (W4 ran
        // 13.1 against 12.0 ms of SQLite's time with it first). It is left out of a fetch of rows
        // without a page from a table that holds only the fetched entity (no entity inherits
        // from it): the loop below skips rows of any other number, which a corrupt or foreign
        // file may hold, so SQLite does not test every row it scans (W2 20.7 against 21.2 ms,
        // W4 11.3–11.8 against 12.0). Counts, IDs and pages keep it: a skipped row would
        // still count there. With one entity number the `Z_ENT` tie-break of the order goes too.
        let soleEntity =
            request.resultKind == .rows && !paged && request.aggregation == nil
            && request.entity.rootEntityNumber == request.entity.entityNumber
            && request.entity.subentityNames.isEmpty && numbers.count == 1
        let entityTest = "t0.Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))"
        if !soleEntity { clauses.append(entityTest) }
        let order =
            exact
            ? translator.orderBy(request.sort, entityLayout.entity, "t0", byEntity: numbers.count != 1) : nil
        let from = ([" FROM \(table.name.sqlName) t0"] + translator.joins).joined(separator: " ")
        let whereSQL = clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND ")
        let bindings = translator.bindings
        // No page, no LIMIT clause: with one (even `LIMIT -1`), SQLite sorts through a b-tree
        // that can drop rows past the limit instead of its merge sorter, which sorts a whole
        // result about a fifth faster (W4's 17,000 rows: 28 against 35 ms).
        let page = order == nil || !paged ? "" : " LIMIT \(request.limit ?? -1) OFFSET \(request.offset)"
        let orderSQL = order.map { " ORDER BY " + $0.joined(separator: ", ") } ?? ""
        try read("fetching \(request.entity.name)") { connection in
            var answer: StoreFetchResult
            switch request.resultKind {
            case .count where exact && (order != nil || (request.offset == 0 && request.limit == nil)):
                let sql =
                    order == nil || (request.offset == 0 && request.limit == nil)
                    ? "SELECT COUNT(*)\(from)\(whereSQL)"
                    : "SELECT COUNT(*) FROM (SELECT 1\(from)\(whereSQL)\(orderSQL)\(page))"
                let statement = try connection.cached(sql)
                try statement.bind(bindings)
                let count = try statement.step() ? Int(statement.int64(at: 0)) : 0
                // Reset now: a statement left mid-result would pin the reader to an old snapshot.
                try statement.reset()
                answer = StoreFetchResult(count: count, appliedPredicate: true, appliedSort: true, appliedPage: true)
            case .ids where order != nil:
                let statement = try connection.cached("SELECT t0.Z_PK, t0.Z_ENT\(from)\(whereSQL)\(orderSQL)\(page)")
                try statement.bind(bindings)
                var ids: [RowID] = []
                try stepping(statement) {
                    guard let number = plans.modelNumber(storeNumber: statement.int64(at: 1)) else { return }
                    ids.append(RowID(entity: number, primaryKey: try checkedKey(statement.int64(at: 0), of: number)))
                }
                answer = StoreFetchResult(ids: ids, appliedPredicate: true, appliedSort: true, appliedPage: true)
            default:
                let statement = try connection.cached(
                    "SELECT \(table.selectList("t0"))\(from)\(whereSQL)\(orderSQL)\(page)")
                try statement.bind(bindings)
                var part = StoreFetchResult(
                    appliedPredicate: exact, appliedSort: order != nil, appliedPage: order != nil)
                var probe = request.cachedRows.map(CachedRows.Probe.init)
                let sole = soleEntity ? request.entity.entityNumber : nil
                do {
                    while try statement.step() {
                        guard let row = try decode(statement, cached: &probe) else { continue }
                        // Without the Z_ENT test, a row of another entity is left out here.
                        if let sole, row.id.entity != sole { continue }
                        part.rows.append(row)
                        if part.rows.count >= partSize {
                            try body(&part)
                            part.rows.removeAll(keepingCapacity: true)
                        }
                    }
                } catch {
                    try? statement.reset()
                    throw error
                }
                answer = part
            }
            try body(&answer)
        }
    }

    public func rows(for ids: [RowID]) throws -> [RowSnapshot] {
        if ids.count == 1, let plan = plans.entity(ids[0].entity) {
            // One row (a fault, an object by ID): a prepared statement found without any strings.
            return try read("loading rows") { connection in
                let statement = try connection.cached(plan.lookup.sql, slot: plan.lookup.slot)
                try statement.bind(ids[0].primaryKey, at: 1)
                var rows: [RowSnapshot] = []
                try stepping(statement) { if let row = try decode(statement) { rows.append(row) } }
                return rows
            }
        }
        var byTable: [String: [Int64]] = [:]
        for id in ids {
            guard let entity = model.entity(number: id.entity), let table = layout.tables[entity.rootEntityName] else {
                continue
            }
            byTable[table.name, default: []].append(id.primaryKey)
        }
        guard !byTable.isEmpty else { return [] }
        return try read("loading rows") { connection in
            var rows: [RowSnapshot] = []
            rows.reserveCapacity(ids.count)
            for table in layout.tables.values {
                guard let keys = byTable[table.name] else { continue }
                let select = "SELECT \(table.selectList("t0")) FROM \(table.name.sqlName) t0 WHERE t0.Z_PK"
                if keys.count == 1 {
                    let statement = try connection.cached(select + " = ?")
                    try statement.bind(keys[0], at: 1)
                    try stepping(statement) { if let row = try decode(statement) { rows.append(row) } }
                    continue
                }
                for start in stride(from: 0, to: keys.count, by: Self.chunkSize) {
                    let chunk = keys[start..<min(start + Self.chunkSize, keys.count)]
                    let statement = try connection.cached(select + " IN (" + Self.placeholders(chunk.count) + ")")
                    for (offset, key) in chunk.enumerated() { try statement.bind(key, at: Int32(offset + 1)) }
                    try stepping(statement) { if let row = try decode(statement) { rows.append(row) } }
                }
            }
            return rows
        }
    }

    static func placeholders(_ count: Int) -> String {
        String(repeating: "?, ", count: max(count - 1, 0)) + "?"
    }

    /// Steps `statement` to its end, calling `body` for each row; when either throws, resets the
    /// statement first, so it neither pins the reader to an old snapshot nor keeps a write open
    /// under the rollback that follows.
    func stepping(_ statement: SQLiteStatement, _ body: () throws -> Void) throws {
        do {
            while try statement.step() { try body() }
        } catch {
            try? statement.reset()  // releases the statement only; the error being thrown is the one that counts
            throw error
        }
    }

    /// A primary key read from the file, checked: Core Data and Strata number rows from 1, and a
    /// key below 1 would collide with the core's temporary IDs.
    ///
    /// - Throws: ``StoreError`` `.corrupt` naming the store, the entity and the key.
    @inline(__always)
    func checkedKey(_ key: Int64, of entity: Int32, relationship: String? = nil) throws -> Int64 {
        guard key > 0 else { throw damagedKey(key, of: entity, relationship: relationship) }
        return key
    }

    func damagedKey(_ key: Int64, of entity: Int32, relationship: String?) -> StoreError {
        let name = model.entity(number: entity)?.name ?? "number \(entity)"
        let table = layout.entity(entity)?.table ?? "?"
        let what = relationship.map { "to-one relationship '\($0)' holds key" } ?? "has primary key (Z_PK)"
        return StoreError(
            .corrupt,
            "a row of entity '\(name)' (table \(SQLIdentifier.display(table))) \(what) \(key); keys start at 1, so the file is damaged. Restore it from a backup, or fix or delete that row with a SQLite tool",
            store: path)
    }

    /// The row at the statement's cursor (`Z_PK, Z_ENT, Z_OPT, <table columns>`), or `nil` for a
    /// `Z_ENT` the model does not know.
    ///
    /// - Throws: ``StoreError`` `.corrupt` for a primary or to-one key below 1.
    func decode(_ statement: SQLiteStatement) throws -> RowSnapshot? {
        var none: CachedRows.Probe? = nil
        return try decode(statement, cached: &none)
    }

    /// The row at the statement's cursor like ``decode(_:)``; when `cached` holds the row at the
    /// same `Z_OPT` (and asks for it: ``CachedRows/Probe``), its values are taken instead of
    /// decoded (``CachedRows``).
    func decode(_ statement: SQLiteStatement, cached: inout CachedRows.Probe?) throws -> RowSnapshot? {
        guard let number = plans.modelNumber(storeNumber: statement.int64(at: 1)) else { return nil }
        let id = RowID(entity: number, primaryKey: try checkedKey(statement.int64(at: 0), of: number))
        let version = statement.int64(at: 2)
        if let values = cached?.values(of: id, version: version) {
            return RowSnapshot(id: id, version: version, values: values)
        }
        guard let plan = plans.entity(number) else { return nil }
        var values: [StoreValue] = []
        values.reserveCapacity(plan.decode.count)
        for slot in plan.decode {
            switch slot {
            case .null:
                values.append(.null)
            case .attribute(let index, let type):
                values.append(ValueCoding.attribute(statement, index, type))
            case .toOne(let index, let entityIndex, let destination):
                if statement.isNull(at: index) {
                    values.append(.null)
                } else {
                    var target = destination
                    if let entityIndex, !statement.isNull(at: entityIndex),
                        let stored = plans.modelNumber(storeNumber: statement.int64(at: entityIndex))
                    {
                        target = stored
                    }
                    let key = statement.int64(at: index)
                    guard key > 0 else {
                        throw damagedKey(
                            key, of: number, relationship: plan.layout.entity.properties[values.count].name)
                    }
                    values.append(.reference(RowID(entity: target, primaryKey: key)))
                }
            case .unfetched:
                values.append(.unfetched)
            }
        }
        return RowSnapshot(id: id, version: version, values: values)
    }
}
