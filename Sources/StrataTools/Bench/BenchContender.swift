import Foundation

/// Something the benchmarks time: Strata on one driver, or a peer (raw SQLite, raw LMDB, GRDB).
///
/// The runner (``BenchRunner``) calls these in a fixed order on one thread: per round it opens a
/// fresh store, runs W1, W2, W2-any (Strata only), W3, W4, W8, W5 and W6 on it and closes it; opens a store of 1,000
/// rows for W8-1k; and opens a third store holding the W7 graph. Only the workload calls are
/// timed; `open`, `close`, ``prepareColdLookups()``, ``insertGraph(_:)``, ``loadForChange(_:)``
/// and the small store's fill are not.
///
/// Lookups and changes name rows by their ``BenchRow/id`` (1…N in insert order); a contender that
/// keys rows differently (Strata's object IDs) keeps its own map, built outside the timings.
public protocol BenchContender: AnyObject {
    /// A stable identifier for tables and JSON (`strata-sqlite`, `sqlite-c`, `grdb`).
    var id: String { get }
    /// The engine family (`memory`, `sqlite`, `lmdb`, `xml`): ratios compare against the raw
    /// engine of the same family.
    var engine: String { get }
    /// The durability and engine settings, in words, for the report.
    var settings: String { get }

    /// Opens a new, empty store in `directory` (an empty directory the runner owns).
    func open(in directory: URL) throws
    /// Closes the store opened last.
    func close() throws

    /// W1: inserts `rows` and saves them in one transaction.
    func insert(_ rows: ArraySlice<BenchRow>) throws -> BenchOutcome
    /// W2: reads every row with every attribute.
    func fetchAll() throws -> BenchOutcome
    /// W2-any: W2 with every value read through the `Any?` subscript and a cast, or `nil` for a
    /// contender without key-value reads (only Strata's objects have them).
    func fetchAllReadingAny() throws -> BenchOutcome?
    /// Untimed, before the first pass of W3 and before each W7 walk: drops what a contender
    /// caches above its engine (Strata's row cache), so the pass goes to the engine.
    func prepareColdLookups() throws
    /// W3: reads each row of `ids` by its ID, one lookup at a time; `warm` is the second pass
    /// (Strata serves it from the row cache; the raw engines simply repeat).
    func lookUp(_ ids: [Int64], warm: Bool) throws -> BenchOutcome
    /// W4: the rows whose age is in `ages`, sorted by name, every attribute read.
    func fetchFiltered(ages: ClosedRange<Int32>) throws -> BenchOutcome
    /// W5: adds 1 to every row's score and saves (reading the rows is part of the work).
    func updateAll() throws -> BenchOutcome
    /// W6: deletes every row and saves.
    func deleteAll() throws -> BenchOutcome

    /// Untimed part of W8: loads the rows of `ids` the way an app holds them before changing them.
    func loadForChange(_ ids: [Int64]) throws
    /// W8: changes one attribute (age + 1) of the rows loaded by ``loadForChange(_:)`` and saves.
    func saveChanged() throws -> BenchOutcome

    /// Untimed: fills the store with `dataset`'s graph (parents with `number` 1…P, children with
    /// `value` 1…P×C, child `c` belonging to parent `(c - 1) / C + 1`).
    func insertGraph(_ dataset: BenchDataset) throws
    /// W7: fetches every parent and, for each, walks its children reading their values.
    func walkGraph(prefetch: Bool) throws -> BenchOutcome
}

extension BenchContender {
    /// Nothing to drop: the raw engines and GRDB cache nothing above their engine.
    public func prepareColdLookups() throws {}

    /// Only Strata's objects read values by key.
    public func fetchAllReadingAny() throws -> BenchOutcome? { nil }
}
