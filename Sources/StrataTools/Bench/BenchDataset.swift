import Foundation

/// One row of the benchmark entity: six attributes (Int64 id, two strings, Int32, Double, Date).
public struct BenchRow: Sendable, Hashable {
    /// 1…N, also the row's key in the raw engines.
    public var id: Int64
    /// A unique name (six random letters and the id), the sort key of W4.
    public var name: String
    /// An e-mail-like string.
    public var email: String
    /// 18…127, uniform, so 30…40 selects about 10%.
    public var age: Int32
    /// A value with two decimals; W5 adds 1.
    public var score: Double
    /// Whole seconds, so every engine stores it exactly.
    public var created: Date

    /// Creates a row.
    public init(id: Int64, name: String, email: String, age: Int32, score: Double, created: Date) {
        self.id = id
        self.name = name
        self.email = email
        self.age = age
        self.score = score
        self.created = created
    }
}

/// The checksum every contender computes over the values it reads, so the harness can tell that
/// all of them read the same data.
public enum BenchChecksum {
    /// The checksum of one row's values.
    @inlinable
    public static func row(id: Int64, nameBytes: Int, emailBytes: Int, age: Int64, score: Double, created: Double)
        -> Int64
    {
        id &+ Int64(nameBytes) &* 3 &+ Int64(emailBytes) &* 5 &+ age &* 7 &+ Int64(score.rounded()) &+ Int64(created)
            % 1_000_003
    }

    /// The checksum of one row.
    public static func row(_ r: BenchRow) -> Int64 {
        row(
            id: r.id, nameBytes: r.name.utf8.count, emailBytes: r.email.utf8.count, age: Int64(r.age), score: r.score,
            created: r.created.timeIntervalSinceReferenceDate)
    }

    /// The order-sensitive checksum of W4's result: position-weighted ids.
    @inlinable
    public static func ordered(position: Int, id: Int64) -> Int64 { Int64(position + 1) &* (id % 10_007) }

    /// The checksum of a child reached in W7.
    @inlinable
    public static func child(parent: Int64, value: Int64) -> Int64 { parent &* 31 &+ value }
}

/// The data every contender works on, generated from a seed so every run and every contender sees
/// the same rows, lookups and changes.
public struct BenchDataset: Sendable {
    /// The rows, ids 1…N in order.
    public let rows: [BenchRow]
    /// W3's lookups: 10,000 ids (or N when smaller), random with repeats.
    public let lookupIDs: [Int64]
    /// W8's changes: ``saveRepetitions`` sets of 10 distinct ids, taken from the first 1,000 rows
    /// so the same sets serve the 1,000-row store of W8-1k.
    public let changeSets: [[Int64]]
    /// Parents in W7's graph.
    public let parents: Int
    /// Children per parent in W7's graph.
    public let childrenPerParent: Int
    /// W4's age range.
    public static let ageRange: ClosedRange<Int32> = 30...40
    /// How many saves of 10 rows one W8 sample averages.
    public static let saveRepetitions = 10
    /// The rows of W8-1k's store.
    public static let smallStoreRows = 1_000

    /// Generates a dataset of `rows` rows (at least 1,000).
    public init(rows count: Int, parents: Int = 1_000, childrenPerParent: Int = 10, seed: UInt64 = 0x5354_5241_5441) {
        var rng = SplitMix64(seed: seed)
        let letters = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        var rows: [BenchRow] = []
        rows.reserveCapacity(count)
        for i in 1...max(count, 1) {
            var prefix: [UInt8] = []
            for _ in 0..<6 { prefix.append(letters[Int(rng.next() % 26)]) }
            let name = String(decoding: prefix, as: UTF8.self) + "-\(i)"
            let email = "user\(rng.next() % 100_000)@example.org"
            let age = Int32(18 + rng.next() % 110)
            let score = Double(rng.next() % 1_000_000) / 100
            let created = Date(timeIntervalSinceReferenceDate: Double(rng.next() % 600_000_000))
            rows.append(BenchRow(id: Int64(i), name: name, email: email, age: age, score: score, created: created))
        }
        self.rows = rows
        lookupIDs = (0..<min(10_000, rows.count)).map { _ in Int64(1 + rng.next() % UInt64(rows.count)) }
        let pool = min(rows.count, Self.smallStoreRows)
        var sets: [[Int64]] = []
        for _ in 0..<Self.saveRepetitions {
            var set: Set<Int64> = []
            while set.count < min(10, pool) { set.insert(Int64(1 + rng.next() % UInt64(pool))) }
            sets.append(set.sorted())
        }
        changeSets = sets
        self.parents = parents
        self.childrenPerParent = childrenPerParent
    }

    /// The rows W4 returns, in order.
    public var filteredRows: [BenchRow] {
        rows.filter { Self.ageRange.contains($0.age) }.sorted { $0.name < $1.name }
    }

    /// The outcome every contender's W2 must report.
    public var expectedFetchAll: BenchOutcome {
        BenchOutcome(rows: rows.count, checksum: rows.reduce(0) { $0 &+ BenchChecksum.row($1) })
    }

    /// The outcome every contender's W3 must report.
    public var expectedLookups: BenchOutcome {
        BenchOutcome(
            rows: lookupIDs.count, checksum: lookupIDs.reduce(0) { $0 &+ BenchChecksum.row(rows[Int($1) - 1]) })
    }

    /// The outcome every contender's W4 must report.
    public var expectedFiltered: BenchOutcome {
        let rows = filteredRows
        var sum: Int64 = 0
        for (i, r) in rows.enumerated() {
            sum = sum &+ BenchChecksum.row(r) &+ BenchChecksum.ordered(position: i, id: r.id)
        }
        return BenchOutcome(rows: rows.count, checksum: sum)
    }

    /// The outcome every contender's W7 must report: children reached and their checksum.
    /// Child `c` (1-based) belongs to parent `(c - 1) / childrenPerParent + 1` and has value `c`.
    public var expectedGraphWalk: BenchOutcome {
        var sum: Int64 = 0
        let total = parents * childrenPerParent
        for c in 1...max(total, 1) where total > 0 {
            sum = sum &+ BenchChecksum.child(parent: Int64((c - 1) / childrenPerParent + 1), value: Int64(c))
        }
        return BenchOutcome(rows: total, checksum: sum)
    }
}

/// A small, fast, seedable generator (SplitMix64) so datasets are the same on every machine.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
