import Foundation
import Strata

/// To-many writes that must wait until every owner of the change set has written its members.
struct PendingToManyWrites {
    /// Members an owned foreign key could not take yet (another owner's key was still there):
    /// (the relationship's storage, owner key, member key, position).
    var claims: [(ForeignKeyToMany, owner: Int64, member: Int64, position: Int)] = []
    /// Ordered relationships that are their own inverse: (join, owner key, member keys in order).
    var mirrors: [(JoinToMany, owner: Int64, members: [Int64])] = []
}

extension SQLiteDriver {
    /// Stores the members of a to-many relationship without inverse kept as Core Data keeps it:
    /// the owner's key in each member's row (``ForeignKeyToMany/ownsColumn``). A member still
    /// held by another owner is retried in ``finish(_:_:)``, after every owner has let go.
    func writeOwnedForeignKey(
        _ fk: ForeignKeyToMany, owner: RowID, members: [RowID], isNew: Bool, _ pending: inout PendingToManyWrites,
        _ connection: SQLiteConnection
    ) throws {
        let table = fk.table.sqlName
        let column = fk.column.sqlName
        var existing: Set<Int64> = []
        if !isNew {
            let current = try connection.cached("SELECT Z_PK FROM \(table) WHERE \(column) = ?")
            try current.bind(owner.primaryKey, at: 1)
            try stepping(current) { existing.insert(current.int64(at: 0)) }
        }
        let wanted = Set(members.map(\.primaryKey))
        let clearOrder = fk.orderColumn.map { ", \($0.sqlName) = NULL" } ?? ""
        let release = try connection.cached(
            "UPDATE \(table) SET \(column) = NULL\(clearOrder) WHERE Z_PK = ? AND \(column) = ?")
        for key in existing.subtracting(wanted) {
            try release.reset()
            try release.bind([.integer(key), .integer(owner.primaryKey)])
            try release.step()
        }
        for (position, member) in members.enumerated() {
            if try !claim(fk, owner: owner.primaryKey, member: member.primaryKey, position: position, connection) {
                pending.claims.append((fk, owner.primaryKey, member.primaryKey, position))
            }
        }
    }

    /// Sets `member`'s owned foreign key (and order) to `owner`; `false` when another owner holds it.
    private func claim(
        _ fk: ForeignKeyToMany, owner: Int64, member: Int64, position: Int, _ connection: SQLiteConnection
    ) throws -> Bool {
        let table = fk.table.sqlName
        let column = fk.column.sqlName
        let setOrder = fk.orderColumn.map { ", \($0.sqlName) = ?" } ?? ""
        let statement = try connection.cached(
            "UPDATE \(table) SET \(column) = ?\(setOrder) WHERE Z_PK = ? AND (\(column) IS NULL OR \(column) = ?)")
        var values: [SQLiteValue] = [.integer(owner)]
        if fk.orderColumn != nil { values.append(.integer(Int64(position + 1))) }
        values += [.integer(member), .integer(owner)]
        try statement.reset()
        try statement.bind(values)
        try statement.step()
        return connection.changes == 1
    }

    /// Retries the members no owner had released when they were claimed, and copies the order of
    /// ordered self-inverse relationships into their mirror columns.
    ///
    /// - Throws: ``StoreError`` `.constraint` when a member of a to-many without inverse would
    ///   need two owners: Core Data's layout of the store holds one owner per member.
    func finish(_ pending: PendingToManyWrites, _ connection: SQLiteConnection) throws {
        for (fk, owner, member, position) in pending.claims {
            if try claim(fk, owner: owner, member: member, position: position, connection) { continue }
            let holder = try connection.cached("SELECT \(fk.column.sqlName) FROM \(fk.table.sqlName) WHERE Z_PK = ?")
            try holder.reset()
            try holder.bind(member, at: 1)
            var current: Int64?
            try stepping(holder) { current = holder.int64(at: 0) }
            // A member whose row is gone (deleted in this save) has no key to set, as a join row would dangle.
            guard let current else { continue }
            throw StoreError(
                .constraint,
                "the store keeps a to-many relationship without inverse as Core Data does, in column \(SQLIdentifier.display(fk.column)) of table \(SQLIdentifier.display(fk.table)), which holds one owner per member; row \(member) is already a member of owner \(current) and cannot also belong to owner \(owner). Remove it from the other owner first, or give the relationship an inverse",
                store: path)
        }
        for (join, owner, members) in pending.mirrors {
            guard let mirror = join.mirrorOrderColumn else { continue }
            let statement = try connection.cached(
                "UPDATE \(join.table.sqlName) SET \(mirror.sqlName) = ? WHERE \(join.sourceColumn.sqlName) = ? AND \(join.memberColumn.sqlName) = ?"
            )
            for (position, member) in members.enumerated() {
                try statement.reset()
                try statement.bind([.integer(Int64(position + 1)), .integer(member), .integer(owner)])
                try statement.step()
            }
        }
    }
}
