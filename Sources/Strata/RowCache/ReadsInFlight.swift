/// The reads of a row cache in flight (C5), counted by the removal number at their start.
///
/// Every read from a driver begins and ends one, under the cache's lock; there are rarely more
/// than a few distinct removal numbers in flight at once (one per concurrent reader at most), so
/// a short array searched from the end costs less than hashing each number into a dictionary,
/// which was a tenth of the row cache's work on a lookup by ID. Its storage is kept when it
/// empties, so a run of reads allocates nothing.
struct ReadsInFlight {
    private var counts: [(removals: UInt64, reads: Int)] = []

    /// Whether no read is in flight.
    var isEmpty: Bool { counts.isEmpty }

    /// Reads in flight, all removal numbers together.
    var total: Int {
        var sum = 0
        for entry in counts { sum += entry.reads }
        return sum
    }

    /// The smallest removal number of a read in flight, `nil` with none.
    var oldest: UInt64? { counts.lazy.map(\.removals).min() }

    /// Counts a read begun at `removals`.
    mutating func begin(at removals: UInt64) {
        // The newest number is usually last: reads begin in removal order.
        if let index = counts.lastIndex(where: { $0.removals == removals }) {
            counts[index].reads += 1
        } else {
            counts.append((removals, 1))
        }
    }

    /// Ends a read begun at `removals`; a number no read was counted at is ignored.
    mutating func end(at removals: UInt64) {
        guard let index = counts.lastIndex(where: { $0.removals == removals }) else { return }
        if counts[index].reads > 1 {
            counts[index].reads -= 1
        } else {
            counts.remove(at: index)
        }
    }
}
