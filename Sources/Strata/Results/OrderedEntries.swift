// ORDERED ENTRIES INVARIANTS
// O1. Entries are in ascending order of the comparator, and no two compare the same (each carries
//     its object's row ID as a tie-break).
// O2. No chunk is empty; no chunk holds more than `maximumChunk` entries.
// O3. `tree` is a Fenwick tree over the chunk sizes: prefix(i) is the number of entries in chunks
//     before chunk i.
// States: built (init) -> changed (insert/remove, each keeping O1–O3).

/// A sorted list of entries that finds, inserts and removes an entry, and finds its position, in
/// O(log n) comparisons: a list of chunks (at most ``maximumChunk`` entries each) with a Fenwick
/// tree over their sizes. Moving entries inside one chunk costs O(B) for the chunk size B (a
/// memmove of at most 1,024 entries), independent of n.
///
/// Thread safety: a value type, confined to its controller's context.
struct OrderedEntries<Entry> {
    /// The most entries a chunk holds before it is split in two.
    static var maximumChunk: Int { 1_024 }

    private(set) var chunks: [[Entry]] = []
    private var tree: [Int] = [0]
    private(set) var count = 0
    /// Whether `a` sorts before `b` (strictly).
    let precedes: (Entry, Entry) -> Bool

    /// Creates a list from entries already in order (O1 is the caller's promise).
    ///
    /// - Complexity: O(n).
    init(sorted entries: [Entry], precedes: @escaping (Entry, Entry) -> Bool) {
        self.precedes = precedes
        let half = Self.maximumChunk / 2
        var start = 0
        while start < entries.count {
            let end = min(start + half, entries.count)
            chunks.append(Array(entries[start..<end]))
            start = end
        }
        count = entries.count
        rebuildTree()
    }

    // MARK: Reading

    /// The entry at `index`.
    ///
    /// - Complexity: O(log(n / B)).
    subscript(index: Int) -> Entry {
        let (chunk, offset) = locate(index)
        return chunks[chunk][offset]
    }

    /// Every entry, in order.
    ///
    /// - Complexity: O(n).
    var elements: [Entry] {
        var all: [Entry] = []
        all.reserveCapacity(count)
        for chunk in chunks { all += chunk }
        return all
    }

    /// The position of the entry that compares the same as `probe` (O1 makes it unique), or `nil`.
    ///
    /// - Complexity: O(log n) comparisons.
    func index(of probe: Entry) -> Int? {
        guard let chunk = chunkIndex(for: probe) else { return nil }
        let offset = Self.lowerBound(chunks[chunk], probe, precedes)
        guard offset < chunks[chunk].count, !precedes(probe, chunks[chunk][offset]) else { return nil }
        return prefix(chunk) + offset
    }

    /// The position `probe` would be inserted at.
    ///
    /// - Complexity: O(log n) comparisons.
    func insertionIndex(of probe: Entry) -> Int {
        guard let chunk = chunkIndex(for: probe) else { return count }
        return prefix(chunk) + Self.lowerBound(chunks[chunk], probe, precedes)
    }

    // MARK: Changing

    /// Inserts `entry` in order and returns its position.
    ///
    /// - Complexity: O(log n) comparisons and O(B) moves (O(n / B) when a chunk splits).
    @discardableResult
    mutating func insert(_ entry: Entry) -> Int {
        guard !chunks.isEmpty else {
            chunks = [[entry]]
            count = 1
            rebuildTree()
            return 0
        }
        let chunk = chunkIndex(for: entry) ?? chunks.count - 1
        let offset = Self.lowerBound(chunks[chunk], entry, precedes)
        let position = prefix(chunk) + offset
        chunks[chunk].insert(entry, at: offset)
        count += 1
        if chunks[chunk].count > Self.maximumChunk {
            let half = chunks[chunk].count / 2
            let upper = Array(chunks[chunk][half...])
            chunks[chunk].removeSubrange(half...)
            chunks.insert(upper, at: chunk + 1)
            rebuildTree()
        } else {
            add(1, at: chunk)
        }
        return position
    }

    /// Removes the entry that compares the same as `probe`; returns its position, or `nil`.
    ///
    /// - Complexity: O(log n) comparisons and O(B) moves (O(n / B) when a chunk empties).
    @discardableResult
    mutating func remove(_ probe: Entry) -> Int? {
        guard let chunk = chunkIndex(for: probe) else { return nil }
        let offset = Self.lowerBound(chunks[chunk], probe, precedes)
        guard offset < chunks[chunk].count, !precedes(probe, chunks[chunk][offset]) else { return nil }
        let position = prefix(chunk) + offset
        chunks[chunk].remove(at: offset)
        count -= 1
        if chunks[chunk].isEmpty {
            chunks.remove(at: chunk)
            rebuildTree()
        } else {
            add(-1, at: chunk)
        }
        return position
    }

    // MARK: Internals

    /// The chunk holding `probe` or where it would go: the first whose last entry does not
    /// precede it (the last chunk when every chunk's last entry does); `nil` when empty.
    private func chunkIndex(for probe: Entry) -> Int? {
        guard !chunks.isEmpty else { return nil }
        var low = 0
        var high = chunks.count - 1
        while low < high {
            let middle = (low + high) / 2
            // O2: no chunk is empty.
            if precedes(chunks[middle][chunks[middle].count - 1], probe) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private static func lowerBound(_ chunk: [Entry], _ probe: Entry, _ precedes: (Entry, Entry) -> Bool) -> Int {
        var low = 0
        var high = chunk.count
        while low < high {
            let middle = (low + high) / 2
            if precedes(chunk[middle], probe) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The chunk and offset of position `index` (O3: a descent of the Fenwick tree).
    private func locate(_ index: Int) -> (chunk: Int, offset: Int) {
        // misuse: callers check bounds
        precondition(index >= 0 && index < count, "index \(index) is outside 0..<\(count)")
        var position = 0
        var remaining = index
        var step = 1
        while step * 2 < tree.count { step *= 2 }
        while step > 0 {
            let next = position + step
            if next < tree.count, tree[next] <= remaining {
                position = next
                remaining -= tree[next]
            }
            step /= 2
        }
        return (position, remaining)
    }

    /// The entries in chunks before `chunk`.
    private func prefix(_ chunk: Int) -> Int {
        var total = 0
        var i = chunk
        while i > 0 {
            total += tree[i]
            i -= i & -i
        }
        return total
    }

    private mutating func add(_ delta: Int, at chunk: Int) {
        var i = chunk + 1
        while i < tree.count {
            tree[i] += delta
            i += i & -i
        }
    }

    private mutating func rebuildTree() {
        tree = [Int](repeating: 0, count: chunks.count + 1)
        for (index, chunk) in chunks.enumerated() {
            var i = index + 1
            while i < tree.count {
                tree[i] += chunk.count
                i += i & -i
            }
        }
    }

    #if STRATA_CHECKS
        /// Checks O1–O3.
        func checkInvariants() {
            var total = 0
            var previous: Entry?
            for (index, chunk) in chunks.enumerated() {
                precondition(
                    !chunk.isEmpty && chunk.count <= Self.maximumChunk, "O2: chunk \(index) holds \(chunk.count)")
                precondition(prefix(index) == total, "O3: prefix of chunk \(index)")
                for entry in chunk {
                    if let previous { precondition(precedes(previous, entry), "O1: entries out of order") }
                    previous = entry
                }
                total += chunk.count
            }
            precondition(total == count, "count")
        }
    #endif
}
