import Foundation
import Strata

extension SQLiteDriver {
    /// Migrates the store in place in one transaction when ``SQLiteMigrationScript`` can (see
    /// there), as Core Data's lightweight migration of SQLite stores does; `false` otherwise.
    ///
    /// In the transaction: the rows are checked against the new model (required attributes
    /// without a default, new uniqueness constraints), tables are altered or rebuilt, join tables
    /// and indexes follow the new layout, `Z_PRIMARYKEY` loses dropped entities and gains new ones
    /// (a renamed entity keeps its old `Z_NAME`, as Core Data leaves it), `Z_METADATA` becomes the
    /// plan's metadata and a `Z_MODELCACHE` of the old model is emptied. A failure rolls it all
    /// back. Row versions (`Z_OPT`) and keys are kept.
    public func migrateInPlace(_ plan: StoreMigrationPlan) throws -> Bool {
        guard !isReadOnly, let script = SQLiteMigrationScript(plan: plan, source: layout) else { return false }
        try write("migrating the store in place") { connection in
            try checkRequired(plan, script, connection)
            try SQLiteMigrationRunner(script: script, connection: connection).run()
            try MetadataCoding.write(plan.metadata, naming: layout.naming, to: connection)
            if try connection.tableExists("Z_MODELCACHE") { try connection.execute("DELETE FROM Z_MODELCACHE") }
        }
        return true
    }

    /// Refuses rows that leave a required attribute of the new model without a value; only
    /// attributes that become required are checked (one the old model required already has a
    /// value in every saved row).
    private func checkRequired(
        _ plan: StoreMigrationPlan, _ script: SQLiteMigrationScript, _ connection: SQLiteConnection
    ) throws {
        for entityPlan in plan.entities {
            guard let old = layout.entity(entityPlan.source.entityNumber) else { continue }
            for (slot, property) in entityPlan.destination.properties.enumerated() {
                guard case .attribute(let attribute) = property, !attribute.isOptional, !attribute.isTransient else {
                    continue
                }
                var condition: String
                switch entityPlan.slots[slot] {
                case .null: condition = "1"
                case .attribute(let from, _, nil):
                    guard case .attribute(let column, _, _) = old.slots[from] else { continue }
                    // Required in the old model too: every saved row holds a value, so the rows
                    // are not scanned again (a full scan per attribute made adding an optional
                    // attribute to a large table cost a read of every row).
                    if from < entityPlan.source.properties.count,
                        case .attribute(let source) = entityPlan.source.properties[from],
                        !source.isOptional, !source.isTransient
                    {
                        continue
                    }
                    condition = "\(column.sqlName) IS NULL"
                default: continue
                }
                condition = "Z_ENT = ? AND \(condition)"
                let count =
                    try connection.scalar(
                        "SELECT count(*) FROM \(old.table.sqlName) WHERE \(condition)",
                        [.integer(Int64(old.storeNumber))])?.integer ?? 0
                if count > 0 {
                    throw MigrationError(
                        .validation,
                        "\(entityPlan.destination.name).\(attribute.name) is required in the new model, but \(count) row\(count == 1 ? "" : "s") of \(entityPlan.source.name) have no value for it and the attribute has no default; give it a default value, make it optional, or fill it in a custom migration stage"
                    )
                }
            }
        }
    }
}

/// Runs a ``SQLiteMigrationScript`` on a connection inside the caller's transaction.
struct SQLiteMigrationRunner {
    let script: SQLiteMigrationScript
    let connection: SQLiteConnection

    func run() throws {
        let objects = script.destination.schemaObjects()
        let creates = Dictionary(objects.filter { !$0.isIndex }.map { ($0.name, $0.sql) }) { a, _ in a }
        var rebuilt = Set<String>()
        // Entity tables.
        var sourcesUsed = Set<String>()
        for table in script.tables {
            if let from = table.sourceTable { sourcesUsed.insert(from) }
            if try migrate(table, create: creates[table.table.name]) { rebuilt.insert(table.table.name) }
        }
        for old in Set(script.source.tables.values.map(\.name)).subtracting(sourcesUsed)
        where try connection.tableExists(old) {
            try connection.execute("DROP TABLE \(old.sqlName)")
        }
        // Join tables: copied under new names, created, or dropped.
        let newJoins = Set(script.destination.joinTables.keys)
        for name in newJoins.sorted() where !(try connection.tableExists(name)) {
            if let sql = creates[name] { try connection.execute(sql) }
        }
        var copiedInto = Set<String>()
        for copy in script.joinCopies where copiedInto.insert(copy.to.table + "|" + copy.from.table).inserted {
            var columns = [copy.to.sourceColumn, copy.to.memberColumn]
            var sources = [copy.from.sourceColumn, copy.from.memberColumn]
            if let order = copy.to.orderColumn, let old = copy.from.orderColumn {
                columns.append(order)
                sources.append(old)
            }
            try connection.execute(
                "INSERT OR IGNORE INTO \(copy.to.table.sqlName) (\(columns.map(\.sqlName).joined(separator: ", "))) SELECT \(sources.map(\.sqlName).joined(separator: ", ")) FROM \(copy.from.table.sqlName)"
            )
        }
        for old in Set(script.source.joinTables.keys).subtracting(newJoins) where try connection.tableExists(old) {
            try connection.execute("DROP TABLE \(old.sqlName)")
        }
        // Indexes: every index of the new layout, none of the old layout's that it lacks.
        let wanted = Dictionary(objects.filter(\.isIndex).map { ($0.name, $0) }) { a, _ in a }
        let tables = Set(script.destination.tables.values.map(\.name)).union(newJoins)
        var existing: [String: String] = [:]
        for row in try connection.rows(
            "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
        {
            guard let name = row[0].text, let table = row[1].text, tables.contains(table) else { continue }
            existing[name] = row[2].text ?? ""
        }
        for (name, sql) in existing.sorted(by: { $0.key < $1.key }) where wanted[name]?.sql != sql {
            try connection.execute("DROP INDEX \(name.sqlName)")
            existing[name] = nil
        }
        try checkUniqueness()
        for object in objects where object.isIndex && existing[object.name] == nil {
            try connection.execute(object.sql)
        }
        try updatePrimaryKeyTable()
    }

    /// Moves one hierarchy's table to its new columns; `true` when it was created or rebuilt.
    private func migrate(_ table: SQLiteMigrationScript.TablePlan, create: String?) throws -> Bool {
        let name = table.table.name
        guard let from = table.sourceTable, try connection.tableExists(from) else {
            guard let create else { return false }
            try connection.execute(create)
            return true
        }
        let existing = try connection.rows("SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(from)])
            .compactMap { $0[0].text }
        let bookkeeping: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
        let existingSet = Set(existing)
        let wanted = table.table.columns.map(\.name)
        // Columns of the new table with no expression (order columns of relationships that did not
        // change, columns of entities that start empty) keep the old column of their name, if any.
        func expression(_ column: String) -> (SQLiteMigrationScript.Expression, Set<Int32>) {
            if let entry = table.columns[column] { return (entry.expression, entry.entities) }
            return existingSet.contains(column) ? (.column(column), table.kept) : (.null, table.kept)
        }
        let kept = existing.filter { !bookkeeping.contains($0) }
        let identity = kept.allSatisfy { column in
            wanted.contains(column) && expression(column).0 == .column(column)
        }
        let added = wanted.filter { !existingSet.contains($0) }
        let addable = added.allSatisfy { column in
            switch expression(column).0 {
            case .null, .value: true
            default: false
            }
        }
        let nameIsFree = try from == name || !connection.tableExists(name)
        if identity && addable && nameIsFree {
            if from != name { try connection.execute("ALTER TABLE \(from.sqlName) RENAME TO \(name.sqlName)") }
            let types = Dictionary(table.table.columns.map { ($0.name, $0.type) }) { a, _ in a }
            for column in added {
                try connection.execute(
                    "ALTER TABLE \(name.sqlName) ADD COLUMN \(column.sqlName) \(types[column] ?? "")")
                let (value, entities) = expression(column)
                if case .value(let constant) = value {
                    _ = try connection.rows(
                        "UPDATE \(name.sqlName) SET \(column.sqlName) = ? WHERE Z_ENT IN (\(Self.list(entities)))",
                        [constant])
                }
            }
            if !table.dropped.isEmpty {
                try connection.execute("DELETE FROM \(name.sqlName) WHERE Z_ENT IN (\(Self.list(table.dropped)))")
            }
            return false
        }
        // Rebuild, as Core Data does: rename, create, copy, drop.
        let temporary = "_T_" + name
        if try connection.tableExists(temporary) { try connection.execute("DROP TABLE \(temporary.sqlName)") }
        if from != name, try connection.tableExists(name) {
            throw StoreError(
                .corrupt, "the store already has a table \(name) beside \(from); it cannot be migrated in place",
                store: connection.path)
        }
        try connection.execute("ALTER TABLE \(from.sqlName) RENAME TO \(temporary.sqlName)")
        let order = existing.filter { wanted.contains($0) } + wanted.filter { !existingSet.contains($0) }
        let types = Dictionary(table.table.columns.map { ($0.name, $0.type) }) { a, _ in a }
        let columns =
            ["Z_PK INTEGER PRIMARY KEY", "Z_ENT INTEGER", "Z_OPT INTEGER"]
            + order.map { "\($0.sqlName) \(types[$0] ?? "")" }
        try connection.execute("CREATE TABLE \(name.sqlName) ( \(columns.joined(separator: ", ")) )")
        var bindings: [SQLiteValue] = []
        let selected = order.map { column -> String in
            let (value, entities) = expression(column)
            let sql = value.sql(&bindings)
            guard value != .null, entities != table.kept else { return sql }
            return "CASE WHEN Z_ENT IN (\(Self.list(entities))) THEN \(sql) END"
        }
        _ = try connection.rows(
            "INSERT INTO \(name.sqlName) (\((["Z_PK", "Z_ENT", "Z_OPT"] + order).map(\.sqlName).joined(separator: ", "))) SELECT \((["Z_PK", "Z_ENT", "Z_OPT"] + selected).joined(separator: ", ")) FROM \(temporary.sqlName) WHERE Z_ENT IN (\(Self.list(table.kept)))",
            bindings)
        try connection.execute("DROP TABLE \(temporary.sqlName)")
        return true
    }

    /// Refuses rows that break a new uniqueness constraint, naming a pair of duplicates.
    private func checkUniqueness() throws {
        for check in script.plan.constraintsToCheck {
            guard let entity = script.plan.destinationModel.entity(named: check.entity),
                let layout = script.destination.entity(entity.entityNumber)
            else { continue }
            let columns = check.properties.compactMap { script.destination.column(of: $0, in: layout) }
            guard columns.count == check.properties.count, !columns.isEmpty else { continue }
            let list = columns.map(\.sqlName).joined(separator: ", ")
            let present = columns.map { "\($0.sqlName) IS NOT NULL" }.joined(separator: " AND ")
            let rows = try connection.rows(
                "SELECT min(Z_PK), max(Z_PK), \(list) FROM \(layout.table.sqlName) WHERE Z_ENT IN (\(Self.list(entity.hierarchyNumbers))) AND \(present) GROUP BY \(list) HAVING count(*) > 1 LIMIT 1"
            )
            if let row = rows.first {
                throw MigrationError(
                    .constraintViolation,
                    "existing rows break the uniqueness constraint (\(check.properties.joined(separator: ", "))) of \(entity.name) in the new model: rows \(row[0].integer ?? 0) and \(row[1].integer ?? 0) both have \(row.dropFirst(2).map { SQLiteDriver.describe($0) }.joined(separator: ", ")); change or remove the duplicates before migrating, or resolve them in a custom migration stage"
                )
            }
        }
    }

    /// Drops the entities that went away and adds the new ones; renamed entities keep their name.
    private func updatePrimaryKeyTable() throws {
        for entity in script.plan.droppedEntities {
            _ = try connection.rows("DELETE FROM Z_PRIMARYKEY WHERE Z_ENT = ?", [.integer(Int64(entity.entityNumber))])
        }
        for entity in script.plan.addedEntities {
            let parent =
                entity.superentityName.flatMap { script.plan.destinationModel.entity(named: $0)?.entityNumber } ?? 0
            _ = try connection.rows(
                "INSERT OR REPLACE INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)",
                [.integer(Int64(entity.entityNumber)), .text(entity.name), .integer(Int64(parent))])
        }
    }

    private static func list(_ numbers: Set<Int32>) -> String {
        numbers.isEmpty ? "NULL" : numbers.sorted().map(String.init).joined(separator: ", ")
    }
}
