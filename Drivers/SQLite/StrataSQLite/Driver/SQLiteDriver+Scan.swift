import Foundation
import Strata

extension SQLiteDriver {
    /// Reads an entity's own rows by key range (`Z_ENT = ? AND Z_PK > ? ORDER BY Z_PK LIMIT ?`),
    /// one batch per read, so only one batch is ever in memory; to-many slots are filled per batch.
    public func scanRows(_ request: RowScan, _ body: ([RowSnapshot]) throws -> Void) throws {
        guard let entity = layout.entity(request.entity.entityNumber),
            let table = layout.tables[request.entity.rootEntityName]
        else { return }
        let sql =
            "SELECT \(table.selectList("t0")) FROM \(table.name.sqlName) t0 WHERE t0.Z_ENT = ? AND t0.Z_PK > ? ORDER BY t0.Z_PK LIMIT ?"
        var after = Int64.min
        while true {
            var rows: [RowSnapshot] = try read("reading rows") { connection in
                let statement = try connection.cached(sql)
                try statement.bind(Int64(entity.storeNumber), at: 1)
                try statement.bind(after, at: 2)
                try statement.bind(Int64(request.batchSize), at: 3)
                var rows: [RowSnapshot] = []
                rows.reserveCapacity(request.batchSize)
                try stepping(statement) { if let row = try decode(statement) { rows.append(row) } }
                return rows
            }
            guard let last = rows.last else { return }
            after = last.id.primaryKey
            let complete = rows.count < request.batchSize
            try fillToMany(&rows, of: request.entity)
            try body(rows)
            if complete { return }
        }
    }
}
