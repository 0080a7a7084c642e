import Foundation
import Strata
import StrataTools
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What the parallel-readers workload measured on one driver (milliseconds per round).
///
/// The work is the same in both arrangements: 2 × ``unitsPerReader`` units, each a fetch of every
/// `Item` with every attribute read (W2) in a new context. One reader does all of them on one
/// thread; two readers, on two threads started together, do half each, every context on the same
/// coordinator. Throughput of two over one is `oneReader ÷ twoReaders` (2.0 when nothing is
/// shared). CPU time is the reader threads' own (`CLOCK_THREAD_CPUTIME_ID`), so CPU ÷ wall says
/// how many cores the readers kept busy: below 2 with two readers, they waited (for a lock, or for
/// a core the machine gave to other work). Each reader's time ends with the allocator's deferred
/// work on what it freed (``BenchClock/settleAllocator(_:)``), as every timed workload's does.
public struct ParallelReadersResult: Codable, Sendable {
    /// The driver (``KnownDriver/rawValue``).
    public var driver: String
    /// Rows in the store.
    public var rows: Int
    /// Units each of the two readers runs (one reader runs twice as many).
    public var unitsPerReader: Int
    /// Full stack: one reader's wall time, two readers' wall time, and their CPU time.
    public var oneReaderMs: [Double] = [], twoReadersMs: [Double] = []
    public var oneReaderCPUMs: [Double] = [], twoReadersCPUMs: [Double] = []
    /// The driver alone (``StoreDriver/fetch(_:)`` of every row on the same store's driver, values
    /// read): the same arrangements, to tell the driver's serialisation from the core's.
    public var driverOneReaderMs: [Double] = [], driverTwoReadersMs: [Double] = []
    public var driverOneReaderCPUMs: [Double] = [], driverTwoReadersCPUMs: [Double] = []
}

/// Runs the parallel-readers workload (see ``ParallelReadersResult``).
public enum ParallelReaders {
    /// Units per reader: enough that one measurement lasts well over a scheduler tick at 100,000 rows.
    public static let unitsPerReader = 4

    /// Builds a store of `rows` items with `kind`'s driver under `directory` (untimed), warms it
    /// with one untimed unit, then runs `rounds` rounds of one reader and two readers, full stack
    /// and driver alone.
    public static func run(_ kind: KnownDriver, rows: Int, rounds: Int, in directory: URL) throws
        -> ParallelReadersResult
    {
        let store = try SectionStore.build(kind, rows: rows, in: directory)
        defer { try? store.close() }
        let units = unitsPerReader
        var result = ParallelReadersResult(driver: kind.rawValue, rows: rows, unitsPerReader: units)
        let objects: @Sendable (Int) throws -> Void = { count in
            for _ in 0..<count {
                let context = ManagedObjectContext(coordinator: store.coordinator)
                let items = try store.fetchAll(in: context)
                withExtendedLifetime((context, items)) {}
            }
        }
        let reader = try DriverReader(store)
        let rowsOnly: @Sendable (Int) throws -> Void = { count in
            for _ in 0..<count { try reader.fetchAll() }
        }
        _ = try threads(1) { _ in try objects(1) }  // warm: the driver's caches and the row cache
        for _ in 0..<rounds {
            let one = try threads(1) { _ in try objects(2 * units) }
            let two = try threads(2) { _ in try objects(units) }
            result.oneReaderMs.append(one.wallMs)
            result.oneReaderCPUMs.append(one.cpuMs)
            result.twoReadersMs.append(two.wallMs)
            result.twoReadersCPUMs.append(two.cpuMs)
            let driverOne = try threads(1) { _ in try rowsOnly(2 * units) }
            let driverTwo = try threads(2) { _ in try rowsOnly(units) }
            result.driverOneReaderMs.append(driverOne.wallMs)
            result.driverOneReaderCPUMs.append(driverOne.cpuMs)
            result.driverTwoReadersMs.append(driverTwo.wallMs)
            result.driverTwoReadersCPUMs.append(driverTwo.cpuMs)
        }
        return result
    }

    /// Runs `body` on `count` new threads released together; returns the wall time from their
    /// release to the last one's end and the CPU time all of them used, in milliseconds.
    ///
    /// - Throws: the first error a thread threw.
    static func threads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws -> (
        wallMs: Double, cpuMs: Double
    ) {
        let ready = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<(end: ContinuousClock.Instant?, cpuMs: Double, error: (any Error)?)>((nil, 0, nil))
        let clock = ContinuousClock()
        for index in 0..<count {
            let thread = Thread {
                ready.signal()
                go.wait()
                let cpuStart = BenchClock.threadCPUMs()
                var failure: (any Error)?
                do { try body(index) } catch { failure = error }
                // Each thread frees into an arena of its own: it settles that one (BenchClock.measure).
                BenchClock.settleAllocator()
                let cpu = BenchClock.threadCPUMs() - cpuStart
                let end = clock.now
                outcome.withLock { state in
                    state.end = max(state.end ?? end, end)
                    state.cpuMs += cpu
                    if state.error == nil { state.error = failure }
                }
                done.signal()
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
        for _ in 0..<count { ready.wait() }
        let start = clock.now
        for _ in 0..<count { go.signal() }
        for _ in 0..<count { done.wait() }
        let (end, cpuMs, error) = outcome.withLock { ($0.end, $0.cpuMs, $0.error) }
        if let error { throw error }
        let elapsed = start.duration(to: end ?? start)
        return (Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15, cpuMs)
    }
}

/// Every `Item` row fetched straight from a store's driver, values read and checked.
struct DriverReader: Sendable {
    let driver: any StoreDriver
    let item: EntityDescription
    /// `Item` slots: id, name, email, age, score, created.
    let slots: [Int]
    let expected: BenchOutcome

    init(_ store: SectionStore) throws {
        guard let item = store.coordinator.managedObjectModel.entity(named: "Item") else {
            throw BenchError("the bench model has no Item")
        }
        slots = try ["id", "name", "email", "age", "score", "created"].map { name in
            guard let slot = item.index(ofProperty: name) else { throw BenchError("Item has no \(name)") }
            return slot
        }
        self.item = item
        driver = store.store.driver
        expected = store.expected
    }

    func fetchAll() throws {
        let rows = try driver.fetch(StoreFetch(entity: item)).rows
        var sum: Int64 = 0
        for row in rows {
            let values = row.values
            guard case .integer(let id) = values[slots[0]], case .string(let name) = values[slots[1]],
                case .string(let email) = values[slots[2]], case .integer(let age) = values[slots[3]],
                case .double(let score) = values[slots[4]], case .date(let created) = values[slots[5]]
            else { continue }  // a wrong value makes the checksum differ, reported below
            sum =
                sum
                &+ BenchChecksum.row(
                    id: id, nameBytes: name.utf8.count, emailBytes: email.utf8.count, age: age, score: score,
                    created: created.timeIntervalSinceReferenceDate)
        }
        guard rows.count == expected.rows, sum == expected.checksum else {
            throw BenchError("the driver fetched \(rows.count) rows (checksum \(sum)), expected \(expected.rows)")
        }
    }
}
