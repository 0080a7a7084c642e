import Foundation
import Strata

// Reading to-many relationships: the members' keys (relatedRows), or the members' rows with them
// (relatedRowsWithDestinations, what firing a to-many fault reads). Either is one statement for
// all the source rows: `= ANY($1::bigint[])` over their keys. Reading rows with the members saves
// the round trip a read of keys and then of rows by key took for every fault.

extension PostgreSQLDriver {
    public func relatedRows(_ request: RelatedRowsRequest) throws -> [RowID: [RowID]] {
        guard layout.entity(request.entity.entityNumber) != nil else { return [:] }
        guard let statement = membersStatement(request, rows: false) else { return Self.noMembers(request) }
        let sources = Self.sourcesByKey(request)
        return try read("loading \(request.relationship.name) of \(request.entity.name)") { connection in
            var related = Self.noMembers(request)
            let result = try connection.executePrepared(
                statement.sql, Self.keyArray(request.sources.map(\.primaryKey)))
            for row in 0..<result.rowCount {
                guard let source = sources[result.int64(row, 0)], let number = modelNumber(result.int64(row, 2)) else {
                    continue
                }
                let key = try checkedKey(result.int64(row, 1), of: number)
                related[source, default: []].append(RowID(entity: number, primaryKey: key))
            }
            return related
        }
    }

    /// A to-many relationship's members with their rows, in one statement: the destination table's
    /// columns and then the source key, the members in the order of ``relatedRows(_:)``.
    public func relatedRowsWithDestinations(_ request: RelatedRowsRequest) throws -> RelatedRows {
        guard let statement = membersStatement(request, rows: true) else {
            return RelatedRows(members: Self.noMembers(request), rows: [])
        }
        let sources = Self.sourcesByKey(request)
        let sourceColumn = statement.sourceColumn
        return try read("loading \(request.relationship.name) of \(request.entity.name)") { connection in
            var members = Self.noMembers(request)
            var rows: [RowSnapshot] = []
            var seen = Set<RowID>()
            let result = try connection.executePrepared(
                statement.sql, Self.keyArray(request.sources.map(\.primaryKey)))
            for index in 0..<result.rowCount {
                // A row of an entity the store does not hold is left out, as relatedRows(_:) leaves it.
                guard let source = sources[result.int64(index, sourceColumn)], let row = try decode(result, index)
                else { continue }
                members[source, default: []].append(row.id)
                // A many-to-many member of several sources comes once per source; its row once.
                if seen.insert(row.id).inserted { rows.append(row) }
            }
            return RelatedRows(members: members, rows: rows)
        }
    }

    /// The statement reading the members of `request`'s relationship for a `bigint[]` of source
    /// keys: `source, Z_PK, Z_ENT` per member, or with `rows` the destination table's select list
    /// and then the source. `nil` when the relationship is not a stored to-many of this store.
    /// Built once per relationship and kind (quoting every name again took a quarter of the
    /// client's time in firing a fault).
    private func membersStatement(_ request: RelatedRowsRequest, rows: Bool) -> MembersStatement? {
        let key = MembersStatement.Key(entity: request.entity.entityNumber, slot: request.slot, rows: rows)
        if let known = memberStatements.withLock({ $0[key] }) { return known }
        let table = rows ? destinationTable(request) : nil
        if rows, table == nil { return nil }
        guard let sql = membersSQL(request, rows: table) else { return nil }
        let statement = MembersStatement(sql: sql, sourceColumn: table?.columnCount ?? 0)
        memberStatements.withLock { $0[key] = statement }
        return statement
    }

    /// The SQL of ``membersStatement(_:rows:)``, with `rows` the destination's table.
    private func membersSQL(_ request: RelatedRowsRequest, rows: TableLayout?) -> String? {
        guard let entityLayout = layout.entity(request.entity.entityNumber) else { return nil }
        let pk = "Z_PK".sqlName
        // The source key's column, the tables, and what narrows and orders the members.
        let source: String
        let from: String
        var filter = ""
        let order: String
        switch entityLayout.slots[request.slot] {
        case .toManyForeignKey(let fk):
            source = "m.\(fk.column.sqlName)"
            from = "\(layout.qualified(fk.table)) m"
            if !fk.destinationNumbers.isEmpty {
                filter =
                    " AND m.\("Z_ENT".sqlName) IN (\(fk.destinationNumbers.map(String.init).joined(separator: ", ")))"
            }
            order = fk.orderColumn.map { "m.\($0.sqlName), " } ?? ""
        case .toManyJoin(let join):
            source = "j.\(join.sourceColumn.sqlName)"
            from =
                "\(layout.qualified(join.table)) j JOIN \(layout.qualified(join.destinationTable)) m ON m.\(pk) = j.\(join.memberColumn.sqlName)"
            order = join.orderColumn.map { "j.\($0.sqlName), " } ?? ""
        default:
            return nil
        }
        let selected = rows.map { "\($0.selectList("m")), \(source)" } ?? "\(source), m.\(pk), m.\("Z_ENT".sqlName)"
        return
            "SELECT \(selected) FROM \(from) WHERE \(source) = ANY($1::bigint[])\(filter) ORDER BY \(source), \(order)m.\(pk)"
    }

    /// The table holding the members of `request`'s relationship, when it is a stored to-many.
    private func destinationTable(_ request: RelatedRowsRequest) -> TableLayout? {
        guard let entityLayout = layout.entity(request.entity.entityNumber) else { return nil }
        let name: String
        switch entityLayout.slots[request.slot] {
        case .toManyForeignKey(let fk): name = fk.table
        case .toManyJoin(let join): name = join.destinationTable
        default: return nil
        }
        return layout.tables.values.first { $0.name == name }
    }

    /// An empty member list for every source (a source may be listed more than once).
    private static func noMembers(_ request: RelatedRowsRequest) -> [RowID: [RowID]] {
        var members: [RowID: [RowID]] = [:]
        for source in request.sources { members[source] = [] }
        return members
    }

    /// The source rows by primary key.
    private static func sourcesByKey(_ request: RelatedRowsRequest) -> [Int64: RowID] {
        var sources: [Int64: RowID] = [:]
        for source in request.sources { sources[source.primaryKey] = source }
        return sources
    }
}

/// A statement reading a to-many relationship's members (``PostgreSQLDriver/relatedRows(_:)``, or
/// with their rows), and where its rows hold the source row's key.
struct MembersStatement: Sendable {
    /// Which statement: the relationship (entity and slot) and whether it reads rows.
    struct Key: Hashable, Sendable {
        var entity: Int32
        var slot: Int
        var rows: Bool
    }

    let sql: String
    /// The column of the source row's key.
    let sourceColumn: Int
}
