import CSQLite
import Foundation
import Strata

// Reading to-many relationships: the members' keys (relatedRows), or the members' rows with
// them (relatedRowsWithDestinations, what firing a to-many fault reads), one query per chunk of
// source rows, with statements planned once per relationship (SQLiteStatementPlans.ToMany).

extension SQLiteDriver {
    public func relatedRows(_ request: RelatedRowsRequest) throws -> [RowID: [RowID]] {
        guard let entity = plans.entity(request.entity.entityNumber) else { return [:] }
        var result = Self.noMembers(request)
        guard request.slot < entity.toMany.count, let plan = entity.toMany[request.slot] else { return result }
        try readMembers(request, head: plan.idsHead, tail: plan.tail, one: plan.idsOne) { statement, source in
            guard let number = plans.modelNumber(storeNumber: statement.int64(at: 2)) else { return }
            let key = try checkedKey(statement.int64(at: 1), of: number)
            result[source, default: []].append(RowID(entity: number, primaryKey: key))
        }
        return result
    }

    /// A to-many relationship's members with their rows, in one query per chunk of sources: the
    /// destination table's columns plus the source key, the members in the order of
    /// ``relatedRows(_:)``.
    public func relatedRowsWithDestinations(_ request: RelatedRowsRequest) throws -> RelatedRows {
        guard let entity = plans.entity(request.entity.entityNumber) else {
            return RelatedRows(members: [:], rows: [])
        }
        guard request.slot < entity.toMany.count, let plan = entity.toMany[request.slot] else {
            return RelatedRows(members: Self.noMembers(request), rows: [])
        }
        guard let head = plan.rowsHead, let one = plan.rowsOne else {
            // The destination's table is not the store's: read keys, then rows, as drivers do by default.
            let listed = try relatedRows(request)
            var seen = SeenRowIDs()
            let ids = listed.values.joined().filter { seen.insert($0) }
            return RelatedRows(members: listed, rows: ids.isEmpty ? [] : try rows(for: ids))
        }
        // A fault's one source: its members in a list of their own, room made for a few at once
        // (growing from empty reallocated both lists three times for ten members).
        let single = request.sources.count == 1
        var members = single ? [:] : Self.noMembers(request)
        var rows: [RowSnapshot] = []
        var only: [RowID] = []
        if single {
            rows.reserveCapacity(SeenRowIDs.linearLimit)
            only.reserveCapacity(SeenRowIDs.linearLimit)
        }
        var seen = SeenRowIDs()
        // The rows come ordered by source: each source's members gather in `only` and go into the
        // table once the next source's rows begin, one lookup per source instead of one per row.
        var current: RowID?
        try readMembers(request, head: head, tail: plan.tail, one: one, sourceIndex: plan.rowsSourceIndex) {
            statement, source in
            // A row of an entity the model lacks is left out, as relatedRows(_:) leaves it.
            guard let row = try decode(statement) else { return }
            if !single, source != current {
                if let current { members[current, default: []] += only }
                current = source
                only.removeAll(keepingCapacity: true)
            }
            only.append(row.id)
            // Distinct source keys (readMembers asks for each once) and a foreign key in the
            // member's table: no row comes twice.
            if plan.membersAreUnique || seen.insert(row.id) { rows.append(row) }
        }
        if single {
            members = [request.sources[0]: only]
        } else if let current {
            members[current, default: []] += only
        }
        return RelatedRows(members: members, rows: rows)
    }

    /// An empty member list for every source (a source may be listed more than once).
    private static func noMembers(_ request: RelatedRowsRequest) -> [RowID: [RowID]] {
        var members: [RowID: [RowID]] = [:]
        for source in request.sources { members[source] = [] }
        return members
    }

    /// Runs a members statement for every chunk of `request.sources` and calls `body` with each
    /// result row and its source row (read from column `sourceIndex`).
    private func readMembers(
        _ request: RelatedRowsRequest, head: String, tail: String, one: (sql: String, slot: Int),
        sourceIndex: Int32 = 0, _ body: (SQLiteStatement, RowID) throws -> Void
    ) throws {
        // A fault has one source: no table of them to build and look each row's source up in.
        let only = request.sources.count == 1 ? request.sources.first : nil
        var sources: [Int64: RowID] = [:]
        var keys: [Int64] = []
        if let only {
            keys = [only.primaryKey]
        } else {
            // Each source key once, in the order given: a key in two chunks would read its
            // members twice.
            keys.reserveCapacity(request.sources.count)
            for source in request.sources where sources.updateValue(source, forKey: source.primaryKey) == nil {
                keys.append(source.primaryKey)
            }
        }
        try read("loading \(request.relationship.name) of \(request.entity.name)") { connection in
            for start in stride(from: 0, to: keys.count, by: Self.chunkSize) {
                let chunk = keys[start..<min(start + Self.chunkSize, keys.count)]
                let statement =
                    chunk.count == 1
                    ? try connection.cached(one.sql, slot: one.slot)
                    : try connection.cached(head + Self.placeholders(chunk.count) + tail)
                for (offset, key) in chunk.enumerated() { try statement.bind(key, at: Int32(offset + 1)) }
                // Rows come ordered by source key: the last key's source is asked for again
                // rather than looked up per row.
                var last: (key: Int64, source: RowID)?
                try stepping(statement) {
                    let key = statement.int64(at: sourceIndex)
                    let source: RowID?
                    if let only {
                        source = only.primaryKey == key ? only : nil
                    } else if let last, last.key == key {
                        source = last.source
                    } else {
                        source = sources[key]
                        last = source.map { (key, $0) }
                    }
                    guard let source else { return }
                    try body(statement, source)
                }
            }
        }
    }
}
