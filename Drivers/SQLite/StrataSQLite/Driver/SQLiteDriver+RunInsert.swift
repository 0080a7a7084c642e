import Foundation
import Strata

// Inserting many rows of one entity: SQLite's cost per statement run (starting the virtual
// machine, halting it, resetting) is larger than binding and storing one row of a few columns,
// so a run of inserts goes in statements of several rows each (`INSERT … VALUES (…), (…), …`).
// Measured with the C API on a nine-column table: 100,000 inserts take about a quarter less CPU
// in statements of 32 rows than one row at a time.

extension SQLiteDriver {
    /// Inserts a run of rows of one entity inside a write transaction: in statements of
    /// ``SQLiteStatementPlans/Entity/insertManyRows`` rows, one at a time for the rest. A save's
    /// rows come as a whole run (``insert(run:)``); a batch insert's are filled one by one
    /// (``fillNext(key:_:)``) and wait until a statement's worth is there (``finish()`` inserts
    /// the rest).
    ///
    /// A row waits here until its statement runs, so a failed statement (a key already stored, a
    /// uniqueness constraint) fails the whole run; the caller's transaction rolls back either way.
    struct RunInserter {
        let driver: SQLiteDriver
        let plan: SQLiteStatementPlans.Entity
        let connection: SQLiteConnection
        /// Keys and values of the rows waiting; `values` keeps its buffers between statements
        /// (``fillNext(key:_:)`` fills them in place), so only the first `count` are waiting.
        private var keys: [Int64] = []
        private var values: [[StoreValue]] = []
        private var count = 0
        /// Whether `Z_ENT` and `Z_OPT` are bound in the one-row and the many-row statement (they
        /// are the same for every row of the entity, and a statement keeps its bindings).
        private var constantsBound = (one: false, many: false)

        init(driver: SQLiteDriver, plan: SQLiteStatementPlans.Entity, connection: SQLiteConnection) {
            self.driver = driver
            self.plan = plan
            self.connection = connection
            keys.reserveCapacity(plan.insertManyRows)
            values.reserveCapacity(plan.insertManyRows)
        }

        /// Adds the row of key `key` whose values `fill` writes into a buffer kept from earlier
        /// rows; `false` (no row) when `fill` returns `false`.
        mutating func fillNext(key: Int64, _ fill: (inout [StoreValue]) throws -> Bool) throws -> Bool {
            if count == values.count {
                values.append([])
                keys.append(0)
            }
            guard try fill(&values[count]) else { return false }
            keys[count] = key
            count += 1
            if plan.insertMany == nil || count == plan.insertManyRows { try insertWaiting() }
            return true
        }

        /// Inserts a run of rows of the entity that nothing is waiting before, binding each row's
        /// values where the caller holds them: in statements of
        /// ``SQLiteStatementPlans/Entity/insertManyRows`` rows, one at a time for the rest. No row
        /// is copied into the inserter: copying each row's values in and out of it retained and
        /// released them twice more per row.
        ///
        /// - Returns: The largest key of the run.
        mutating func insert(run rows: UnsafeBufferPointer<RowSnapshot>) throws -> Int64 {
            assert(count == 0, "insert(run:) with rows of fillNext(key:_:) waiting")
            var largest = Int64.min
            var start = 0
            if let many = plan.insertMany {
                let size = plan.insertManyRows
                while rows.count - start >= size {
                    // Taken again for each statement: the cache hands it back reset.
                    let statement = try connection.cached(many.sql, slot: many.slot)
                    let part = UnsafeBufferPointer(rebasing: rows[start..<start + size])
                    for (row, snapshot) in part.enumerated() {
                        let first = Int32(row) * plan.insertWidth
                        try statement.bindDirect(snapshot.id.primaryKey, at: first + 1)
                        largest = max(largest, snapshot.id.primaryKey)
                        if !constantsBound.many {
                            try statement.bindDirect(Int64(plan.storeNumber), at: first + 2)
                            try statement.bindDirect(Int64(1), at: first + 3)
                        }
                    }
                    constantsBound.many = true
                    try driver.bindRowsAndStep(part, row: 0, slot: 0, at: 4, plan, statement)
                    start += size
                }
            }
            for snapshot in rows[start...] {
                try insertOne(key: snapshot.id.primaryKey, snapshot.values)
                largest = max(largest, snapshot.id.primaryKey)
            }
            return largest
        }

        /// Inserts the rows still waiting, one statement each.
        mutating func finish() throws {
            for index in 0..<count { try insertOne(key: keys[index], values[index]) }
            count = 0
        }

        private mutating func insertOne(key: Int64, _ row: [StoreValue]) throws {
            try driver.insertRow(key: key, row, plan, connection, bindingConstants: !constantsBound.one)
            constantsBound.one = true
        }

        /// Inserts every waiting row: in one statement when they fill it, else one at a time.
        private mutating func insertWaiting() throws {
            guard let many = plan.insertMany, count == plan.insertManyRows else { return try finish() }
            let statement = try connection.cached(many.sql, slot: many.slot)
            for (row, key) in keys.prefix(count).enumerated() {
                let first = Int32(row) * plan.insertWidth
                try statement.bindDirect(key, at: first + 1)
                if !constantsBound.many {
                    try statement.bindDirect(Int64(plan.storeNumber), at: first + 2)
                    try statement.bindDirect(Int64(1), at: first + 3)
                }
            }
            constantsBound.many = true
            let (driver, plan) = (driver, plan)
            try values.withUnsafeBufferPointer { rows in
                try driver.bindRowsAndStep(
                    UnsafeBufferPointer(rebasing: rows.prefix(count)), row: 0, slot: 0, at: 4, plan, statement)
            }
            count = 0
        }
    }

    /// Binds the values of `rows` (row `row` from slot `slot` on, at parameter `index`, then every
    /// later row, each starting ``SQLiteStatementPlans/Entity/insertWidth`` parameters after the
    /// one before), then runs the statement once.
    ///
    /// Text is bound without SQLite copying it (a copy per string per row was a tenth of a
    /// batch insert's work): each string is bound inside the scope of its UTF-8 storage
    /// (`withUTF8`), the statement runs inside every such scope (this function recurses into
    /// it), and each text parameter is bound to NULL again before its scope ends, so the statement
    /// never holds a pointer past the string's life.
    func bindRowsAndStep<Row: InsertedRow>(
        _ rows: UnsafeBufferPointer<Row>, row: Int, slot: Int, at index: Int32,
        _ plan: SQLiteStatementPlans.Entity, _ statement: SQLiteStatement
    ) throws {
        var (row, slot, index) = (row, slot, index)
        while row < rows.count {
            let values = rows[row].insertedValues
            while slot < plan.bind.count {
                if case .value = plan.bind[slot], case .string(var text) = values[slot] {
                    let (textIndex, nextRow, nextSlot) = (index, row, slot + 1)
                    try text.withUTF8 { bytes in
                        try statement.bindDirectStatic(bytes, at: textIndex)
                        defer { statement.unbind(at: textIndex) }
                        try bindRowsAndStep(rows, row: nextRow, slot: nextSlot, at: textIndex + 1, plan, statement)
                    }
                    return
                }
                try bindColumns(of: values[slot], plan.bind[slot], to: statement, at: &index)
                slot += 1
            }
            row += 1
            slot = 0
            index = Int32(row) * plan.insertWidth + 4
        }
        try statement.step()
    }
}

/// A row ``SQLiteDriver/bindRowsAndStep(_:row:slot:at:_:_:)`` binds: a save's row snapshot, or
/// the values a batch insert filled.
protocol InsertedRow {
    /// The row's values, in slot order.
    var insertedValues: [StoreValue] { get }
}

extension RowSnapshot: InsertedRow {
    var insertedValues: [StoreValue] { values }
}

extension Array: InsertedRow where Element == StoreValue {
    var insertedValues: [StoreValue] { self }
}
