/// Puts rows of one entity in primary-key order in linear time when their keys are dense.
///
/// An atomic store keeps each entity's rows in a dictionary, whose order is arbitrary; a fetch
/// hands rows over in row-ID order. Sorting 100,000 rows by comparison was a sixth of fetching
/// them all from the in-memory store. Keys handed out by a store run from 1 with few gaps, so
/// each row can be put at its rank among the keys instead: one pass marks where each key's row
/// is, one pass numbers them, and the rows move along the cycles of that permutation (swaps move
/// rows without retaining their values).
enum PrimaryKeyOrder {
    /// How many more possible keys than rows the span may hold for placing by rank; sparser keys
    /// are sorted by comparison.
    static let densityLimit = 4

    /// Orders `rows` (of one entity, so keys are distinct) by primary key.
    static func order(_ rows: inout [RowSnapshot]) {
        let count = rows.count
        guard count > 1 else { return }
        var low = Int64.max
        var high = Int64.min
        for row in rows {
            low = min(low, row.id.primaryKey)
            high = max(high, row.id.primaryKey)
        }
        let (span, overflow) = high.subtractingReportingOverflow(low)
        guard !overflow, count < Int(Int32.max), span < Int64(count) * Int64(densityLimit) else {
            rows.sort { $0.id.primaryKey < $1.id.primaryKey }
            return
        }
        // The position of the row of each key in the span, -1 where no row has that key.
        var positions = [Int32](repeating: -1, count: Int(span) + 1)
        for (index, row) in rows.enumerated() { positions[Int(row.id.primaryKey &- low)] = Int32(index) }
        // Where each row goes: its rank among the keys.
        var destinations = [Int32](repeating: 0, count: count)
        var rank: Int32 = 0
        for position in positions where position >= 0 {
            destinations[Int(position)] = rank
            rank += 1
        }
        // Each swap puts one row where it belongs, so at most count - 1 swaps in all.
        rows.withUnsafeMutableBufferPointer { buffer in
            for start in 0..<count {
                while destinations[start] != Int32(start) {
                    let target = Int(destinations[start])
                    buffer.swapAt(start, target)
                    destinations.swapAt(start, target)
                }
            }
        }
    }
}
