import CLibPQ
import Foundation
import Strata

extension PostgreSQLDriver {
    /// Rows handed over at a time by ``fetch(_:inParts:)``.
    static let fetchPart = 256

    public func fetch(_ request: StoreFetch) throws -> StoreFetchResult {
        var answer: StoreFetchResult?
        var rows: [RowSnapshot] = []
        try fetch(request, partSize: .max) { part in
            // Moved, not copied, when it is the only part (retaining every row's values twice
            // was a tenth of fetching every row).
            if rows.isEmpty {
                swap(&rows, &part.rows)
            } else {
                rows += part.rows
                part.rows = []
            }
            answer = part
        }
        // `fetch(_:partSize:_:)` hands over at least one part.
        var result = answer!
        result.rows = rows
        return result
    }

    public func fetch(_ request: StoreFetch, inParts body: (inout StoreFetchResult) throws -> Void) throws {
        try fetch(request, partSize: Self.fetchPart, body)
    }

    /// The SQL of one fetch: what was translated, and what the driver finishes itself.
    private struct FetchPlan {
        var translator: QueryTranslator
        var from: String
        var whereSQL: String
        /// The SQL translation of the predicate is exact.
        var exact: Bool
        /// The predicate, compiled, when the SQL selects a superset the driver filters itself.
        var residual: CompiledRowPredicate?
        /// `ORDER BY` terms, when the sort translates (and the predicate is applied, here or in SQL).
        var order: [String]?

        var appliesPredicate: Bool { exact || residual != nil }
    }

    private func plan(_ request: StoreFetch, table: TableLayout) -> FetchPlan {
        var translator = QueryTranslator(layout: layout, strings: pushesDownStrings)
        var clauses: [String] = []
        let hierarchy = model.entity(named: table.root)?.hierarchyNumbers ?? []
        let numbers = request.entityNumbers.intersection(hierarchy)
        if numbers != hierarchy {
            let sorted = numbers.sorted()
            let placeholder = translator.bind { parameters in
                parameters.appendArray(PGType.int4Array, elementType: PGType.int4, count: sorted.count) {
                    index, bytes in
                    PGParameters.write(sorted[index], into: &bytes)
                    return true
                }
            }
            clauses.append("t0.\("Z_ENT".sqlName) = ANY(\(placeholder))")
        }
        var exact = true
        var residual: CompiledRowPredicate?
        if let predicate = request.predicate {
            let (sql, isExact) = translator.whereClause(predicate, request.entity, "t0")
            if let sql { clauses.append(sql) }
            exact = isExact
            if !exact { residual = CompiledRowPredicate(predicate, entity: request.entity) }
        }
        let order =
            exact || residual != nil
            ? translator.orderBy(request.sort, request.entity, "t0", oneEntity: numbers.count == 1) : nil
        let from = (["FROM \(layout.qualified(table.name)) t0"] + translator.joins).joined(separator: " ")
        let whereSQL = clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND ")
        return FetchPlan(
            translator: translator, from: from, whereSQL: whereSQL, exact: exact, residual: residual, order: order)
    }

    /// Answers a fetch, handing rows to `body` every `partSize` rows and the rest (or the IDs or
    /// count) in a last part.
    private func fetch(_ request: StoreFetch, partSize: Int, _ body: (inout StoreFetchResult) throws -> Void) throws {
        guard plans.entity(request.entity.entityNumber) != nil, let table = layout.tables[request.entity.rootEntityName]
        else {
            // The entity is not stored here (another configuration): nothing matches.
            var nothing = StoreFetchResult(
                rows: [], ids: [], count: 0, appliedPredicate: true, appliedSort: true, appliedPage: true)
            return try body(&nothing)
        }
        var plan = plan(request, table: table)
        let orderSQL = plan.order.map { " ORDER BY " + $0.joined(separator: ", ") } ?? ""
        let paged = request.offset > 0 || request.limit != nil
        let action = "fetching \(request.entity.name)"
        if request.resultKind == .count, plan.exact {
            // A count does not depend on order: what remains after the offset, up to the limit.
            let sql = "SELECT count(*) \(plan.from)\(plan.whereSQL)"
            let total = try read(action) { Int(try $0.execute(sql, plan.translator.parameters).int64(0, 0)) }
            var answer = StoreFetchResult(
                count: Self.page(total, offset: request.offset, limit: request.limit), appliedPredicate: true,
                appliedSort: true, appliedPage: true)
            return try body(&answer)
        }
        if request.resultKind == .ids, plan.exact, plan.order != nil {
            var page = ""
            if paged {
                page = " LIMIT \(plan.translator.bind { $0.append(Int64(request.limit ?? Int.max)) })"
                page += " OFFSET \(plan.translator.bind { $0.append(Int64(request.offset)) })"
            }
            let sql =
                "SELECT t0.\("Z_PK".sqlName), t0.\("Z_ENT".sqlName) \(plan.from)\(plan.whereSQL)\(orderSQL)\(page)"
            let ids = try read(action) { connection -> [RowID] in
                let result = try connection.execute(sql, plan.translator.parameters)
                var ids: [RowID] = []
                ids.reserveCapacity(result.rowCount)
                for row in 0..<result.rowCount {
                    guard let number = modelNumber(result.int64(row, 1)) else { continue }
                    ids.append(RowID(entity: number, primaryKey: try checkedKey(result.int64(row, 0), of: number)))
                }
                return ids
            }
            var answer = StoreFetchResult(ids: ids, appliedPredicate: true, appliedSort: true, appliedPage: true)
            return try body(&answer)
        }
        // Rows. SQL applies the page only when it applies predicate and sort; with a residual the
        // driver filters and pages while it decodes.
        var page = ""
        if plan.exact, plan.order != nil, paged {
            page = " LIMIT \(plan.translator.bind { $0.append(Int64(request.limit ?? Int.max)) })"
            page += " OFFSET \(plan.translator.bind { $0.append(Int64(request.offset)) })"
        }
        let sql = "SELECT \(table.selectList("t0")) \(plan.from)\(plan.whereSQL)\(orderSQL)\(page)"
        let sorted = plan.order != nil && plan.appliesPredicate
        let pageByDriver = plan.residual != nil && sorted
        var intake = RowIntake(
            residual: plan.residual, countOnly: request.resultKind == .count && plan.residual != nil,
            partSize: partSize, skip: pageByDriver ? request.offset : 0,
            remaining: pageByDriver ? (request.limit ?? Int.max) : Int.max,
            part: StoreFetchResult(appliedPredicate: plan.appliesPredicate, appliedSort: sorted, appliedPage: sorted))
        defer {
            noteCacheHits(
                request.entity, statement: sql, hits: intake.hits, rows: intake.decoded,
                cached: request.cachedRows != nil)
        }
        if let cached = request.cachedRows, request.resultKind == .rows,
            cacheHitRate(request.entity, statement: sql, filtered: request.predicate != nil) >= 0.5
        {
            // Most rows were in the row cache the last time this statement ran (or, for a new one
            // without a predicate, the entity's last fetch): read keys and versions first, and only the
            // rows the cache does not hold (PostgreSQLDriver+CachedFetch.swift).
            let keysSQL =
                "SELECT t0.\("Z_PK".sqlName), t0.\("Z_ENT".sqlName), t0.\("Z_OPT".sqlName) \(plan.from)\(plan.whereSQL)\(orderSQL)\(page)"
            if plan.translator.parameters.count == 0, expectsManyRows(request.entity, statement: sql) {
                try streamThroughCache(
                    request.entity, keysSQL: keysSQL, statement: sql, columns: table.columnCount, cached,
                    action: action, intake: &intake, body)
            } else {
                let rows = try fetchThroughCache(
                    request.entity, keysSQL: keysSQL, rowsSQL: sql, plan.translator.parameters, cached, action: action)
                // The share of cached rows was recorded as they were assembled.
                for snapshot in rows where try !intake.take(snapshot, body) { break }
            }
        } else if plan.translator.parameters.count == 0 {
            // No value to bind: the rows come as a stream, decoded and handed over while the server
            // is still sending (PGConnection+Copy.swift); cached rows are taken from the row cache.
            try read(action) { connection in
                do {
                    try connection.copyRows(sql, columns: table.columnCount, state: &intake) { row, intake in
                        var hit = false
                        guard let snapshot = try decode(row, cached: request.cachedRows, hit: &hit) else { return true }
                        intake.decoded += 1
                        if hit { intake.hits += 1 }
                        return try intake.take(snapshot, body)
                    }
                } catch let error as PostgreSQLError where error.connectionLost && intake.delivered {
                    // Rows were handed over already: reading them again would hand them twice.
                    throw Self.storeError(error, action: action, store: name)
                }
            }
        } else {
            let result = try read(action) { try $0.execute(sql, plan.translator.parameters) }
            for row in 0..<result.rowCount {
                var hit = false
                guard let snapshot = try decode(result, row, cached: request.cachedRows, hit: &hit) else { continue }
                intake.decoded += 1
                if hit { intake.hits += 1 }
                if try !intake.take(snapshot, body) { break }
            }
        }
        var part = intake.part
        if intake.countOnly {
            // A count is complete whatever the order.
            part = StoreFetchResult(
                count: Self.page(intake.matched, offset: request.offset, limit: request.limit), appliedPredicate: true,
                appliedSort: true, appliedPage: true)
        } else if request.resultKind == .ids, part.appliedPage {
            part.ids = part.rows.map(\.id)
        }
        try body(&part)
    }

    /// A fetch's rows as they are read: filtered by the residual predicate, paged, and handed over
    /// in parts.
    struct RowIntake {
        let residual: CompiledRowPredicate?
        /// Only the matching rows are counted (a count the SQL could not take).
        let countOnly: Bool
        let partSize: Int
        var skip: Int
        var remaining: Int
        /// The rows not handed over yet.
        var part: StoreFetchResult
        var matched = 0
        var decoded = 0
        var hits = 0
        /// Whether a part was handed over.
        var delivered = false

        /// Takes one row; returns whether more are wanted.
        mutating func take(_ snapshot: RowSnapshot, _ body: (inout StoreFetchResult) throws -> Void) throws -> Bool {
            guard remaining > 0 else { return false }
            if let residual, try !residual.matches(snapshot.values) { return true }
            matched += 1
            if skip > 0 {
                skip -= 1
                return true
            }
            remaining -= 1
            if !countOnly {
                part.rows.append(snapshot)
                if part.rows.count >= partSize {
                    delivered = true
                    try body(&part)
                    part.rows.removeAll(keepingCapacity: true)
                }
            }
            return remaining > 0
        }
    }

    /// How many of `total` rows remain after skipping `offset` and keeping at most `limit`.
    static func page(_ total: Int, offset: Int, limit: Int?) -> Int {
        let rest = max(total - max(offset, 0), 0)
        return limit.map { min(rest, max($0, 0)) } ?? rest
    }

    public func rows(for ids: [RowID]) throws -> [RowSnapshot] {
        if ids.count == 1, let plan = plans.entity(ids[0].entity) {
            // One row (a fault, an object by ID): one prepared statement.
            var parameters = PGParameters()
            parameters.append(ids[0].primaryKey)
            return try read("loading rows") { connection in
                let result = try connection.executePrepared(plan.lookup, parameters)
                return try (0..<result.rowCount).compactMap { try decode(result, $0) }
            }
        }
        var byTable: [String: [Int64]] = [:]
        for id in ids {
            guard let plan = plans.entity(id.entity) else { continue }
            byTable[plan.layout.table, default: []].append(id.primaryKey)
        }
        guard !byTable.isEmpty else { return [] }
        return try read("loading rows") { connection in
            var rows: [RowSnapshot] = []
            rows.reserveCapacity(ids.count)
            for (table, keys) in byTable.sorted(by: { $0.key < $1.key }) {
                guard let plan = plans.tables[table] else { continue }
                let result = try connection.executePrepared(plan.lookupMany, Self.keyArray(keys))
                for row in 0..<result.rowCount { if let snapshot = try decode(result, row) { rows.append(snapshot) } }
            }
            return rows
        }
    }

    /// One `bigint[]` parameter holding `keys`.
    static func keyArray(_ keys: [Int64]) -> PGParameters {
        var parameters = PGParameters()
        parameters.appendArray(PGType.int8Array, elementType: PGType.int8, count: keys.count) { index, bytes in
            PGParameters.write(keys[index], into: &bytes)
            return true
        }
        return parameters
    }

    /// The model entity number of a stored `Z_ENT`, when this store holds that entity.
    @inline(__always)
    func modelNumber(_ stored: Int64) -> Int32? {
        guard let number = Int32(exactly: stored), plans.entity(number) != nil else { return nil }
        return number
    }

    /// A primary key read from the server, checked: keys start at 1, and a key below 1 would
    /// collide with the core's temporary IDs.
    ///
    /// - Throws: ``StoreError`` `.corrupt` naming the store, the entity and the key.
    @inline(__always)
    func checkedKey(_ key: Int64, of entity: Int32, relationship: String? = nil) throws -> Int64 {
        guard key > 0 else { throw damagedKey(key, of: entity, relationship: relationship) }
        return key
    }

    func damagedKey(_ key: Int64, of entity: Int32, relationship: String?) -> StoreError {
        let entityName = model.entity(number: entity)?.name ?? "number \(entity)"
        let table = layout.entity(entity)?.table ?? "?"
        let what = relationship.map { "to-one relationship '\($0)' holds key" } ?? "has primary key (Z_PK)"
        return StoreError(
            .corrupt,
            "a row of entity '\(entityName)' (table \(SQLIdentifier.display(table))) \(what) \(key); keys start at 1. Fix or delete that row with psql",
            store: name)
    }

    /// The row at `row` of a result of `SELECT Z_PK, Z_ENT, Z_OPT, <table columns>`, or `nil`
    /// for a `Z_ENT` this store does not hold. When `cached` holds the row at the same `Z_OPT`, its
    /// values are taken instead of decoded (``CachedRows``).
    func decode(_ result: PGResult, _ row: Int, cached: CachedRows? = nil) throws -> RowSnapshot? {
        var hit = false
        return try decode(result, row, cached: cached, hit: &hit)
    }

    /// ``decode(_:_:cached:)``, setting `hit` when the values came from `cached`.
    @inline(__always)
    func decode(_ result: PGResult, _ row: Int, cached: CachedRows?, hit: inout Bool) throws -> RowSnapshot? {
        try decode(PGResult.Row(result: result, row: row), cached: cached, hit: &hit)
    }

    /// The row snapshot of `row` (`Z_PK`, `Z_ENT`, `Z_OPT`, then the table's columns), or `nil` for
    /// a `Z_ENT` this store does not hold; from `cached` when it holds the row at the same `Z_OPT`
    /// (then `hit` is set).
    func decode<Row: PGRow>(_ row: Row, cached: CachedRows?, hit: inout Bool) throws -> RowSnapshot? {
        guard let number = Int32(exactly: row.int64(1)), let plan = plans.entity(number) else { return nil }
        let id = RowID(entity: number, primaryKey: try checkedKey(row.int64(0), of: number))
        let version = row.int64(2)
        if let cached, let values = cached.values(of: id, version: version) {
            hit = true
            return RowSnapshot(id: id, version: version, values: values)
        }
        var values: [StoreValue] = []
        values.reserveCapacity(plan.decode.count)
        for slot in plan.decode {
            switch slot {
            case .null:
                values.append(.null)
            case .empty:
                values.append(.references([]))
            case .unfetched:
                values.append(.unfetched)
            case .attribute(let index, let type):
                values.append(
                    try ValueCoding.attribute(row, index, type) { problem in
                        StoreError(
                            .corrupt,
                            "row \(id.primaryKey) of entity '\(plan.layout.entity.name)': \(problem); fix the row with psql",
                            store: name)
                    })
            case .toOne(let index, let entityIndex, let destination):
                if row.isNull(index) {
                    values.append(.null)
                    continue
                }
                var target = destination
                if let entityIndex, !row.isNull(entityIndex), let stored = modelNumber(row.int64(entityIndex)) {
                    target = stored
                }
                let key = row.int64(index)
                guard key > 0 else {
                    throw damagedKey(key, of: number, relationship: plan.layout.entity.properties[values.count].name)
                }
                values.append(.reference(RowID(entity: target, primaryKey: key)))
            }
        }
        return RowSnapshot(id: id, version: version, values: values)
    }
}
