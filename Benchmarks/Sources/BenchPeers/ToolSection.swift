import Foundation
import Strata
import StrataTools

/// The tool section's figures: `strata convert`, `export`, `import` and `validate` (the
/// `StrataTools` calls behind the commands) at several store sizes on every driver, each run in a
/// child process of its own so its peak resident set is its own, with the same driver's W1 (one
/// ``DriverBenchContender`` insert of N rows) and the read-back of the copy (every row read in
/// batches and digested, what the conversion's verification does) as references.
///
/// A store of size N holds N `Item`s plus N/100 `Parent`s with 10 `Child`ren each (1.11 N rows):
/// the conversion copies 11% more rows than W1 inserts, and the relationships of a real store.
public struct ToolSectionResult: Codable, Sendable {
    /// One timed run.
    public struct Run: Codable, Sendable {
        /// `convert`, `read` (the copy read back and digested), `export`, `import`, `validate`, `W1`
        /// (the driver protocol), `W1-objects` (through a context, the `strata-X` contender's W1).
        public var operation: String
        /// The driver of the destination (convert, read, import, W1) or of the store read.
        public var driver: String
        /// N: `Item` rows (the store holds 1.11 N rows).
        public var rows: Int
        /// Wall-clock time of the call in its child, the median of the rounds.
        public var ms: Double
        /// Every round's wall-clock time.
        public var samples: [Double] = []
        /// Processor time (user + system, every thread) of the child, the median of the rounds;
        /// it includes the process's start and the store's opening.
        public var cpuMs: Double = 0
        /// The child's peak resident set, the largest of the rounds.
        public var peakBytes: Int64

        /// Creates a run.
        public init(operation: String, driver: String, rows: Int, ms: Double, peakBytes: Int64) {
            self.operation = operation
            self.driver = driver
            self.rows = rows
            self.ms = ms
            self.peakBytes = peakBytes
        }
    }

    /// The sizes run, ascending.
    public var sizes: [Int]
    /// Every run.
    public var runs: [Run] = []
    /// Drivers not run, with the reason.
    public var skipped: [String] = []

    /// Creates an empty result.
    public init(sizes: [Int]) { self.sizes = sizes }

    /// The run of `operation` on `driver` at `rows`, if any.
    public func run(_ operation: String, _ driver: String, _ rows: Int) -> Run? {
        runs.first { $0.operation == operation && $0.driver == driver && $0.rows == rows }
    }
}

/// The tool section's workloads (see ``ToolSectionResult``).
public enum ToolSection {
    /// The drivers run, in report order.
    public static let drivers: [KnownDriver] = [.sqlite, .xml, .lmdb, .memory, .postgres]

    /// The data of size `n`: N items, N/100 parents with 10 children each.
    public static func dataset(_ n: Int) -> BenchDataset {
        BenchDataset(rows: n, parents: max(1, n / 100), childrenPerParent: 10)
    }

    /// The rows a store of size `n` holds (items, parents and children), without making the data.
    public static func storeRows(_ n: Int) -> Int { n + max(1, n / 100) * 11 }

    /// Builds the SQLite source store of size `n` in `directory` (through the driver, untimed)
    /// and returns its location.
    public static func buildSource(rows n: Int, in directory: URL) throws -> StoreLocation {
        guard let contender = try DriverBenchContender(kind: .sqlite) else {
            throw BenchError("the SQLite driver is not linked into this build")
        }
        try contender.open(in: directory)
        let data = dataset(n)
        _ = try contender.insert(data.rows[...])
        try contender.insertGraph(data)
        try contender.close()
        // SQLite stores have a file name.
        return StoreLocation(scheme: .sqlite, url: directory.appendingPathComponent(KnownDriver.sqlite.fileName!))
    }

    /// Where the copy of the source of size `rows` in driver `kind` goes: a file beside the
    /// source, a named in-memory store, or a schema on the benchmark server.
    public static func copy(_ kind: KnownDriver, rows: Int, in directory: URL) -> StoreLocation? {
        location(kind, named: "copy-\(rows)", in: directory)
    }

    /// Where the import of size `rows` in driver `kind` goes (a new store).
    public static func imported(_ kind: KnownDriver, rows: Int, in directory: URL) -> StoreLocation? {
        location(kind, named: "import-\(rows)", in: directory)
    }

    /// A store named `name` of driver `kind`, or `nil` for a server driver without a server.
    private static func location(_ kind: KnownDriver, named name: String, in directory: URL) -> StoreLocation? {
        switch kind.storage {
        case .memory: StoreLocation(scheme: kind, url: URL(string: "memory:tool-\(name)"))
        case .server:
            kind.location(in: directory.appendingPathComponent("tool-\(name)")).map {
                StoreLocation(scheme: kind, url: $0)
            }
        case .file(let extensions, _):
            StoreLocation(
                scheme: kind,
                url: directory.appendingPathComponent("\(name).\(extensions.first ?? kind.rawValue)"))
        }
    }

    /// `strata convert SOURCE DEST`: the ms of the whole conversion (copy and verification).
    ///
    /// - Throws: ``BenchError`` when the copy does not verify.
    public static func convert(_ source: StoreLocation, to destination: StoreLocation) throws -> Double {
        let (report, ms) = try BenchClock.measure {
            try StoreConverter.convert(from: source, to: destination, options: ConversionOptions(overwrite: true))
        }
        guard report.isVerified else { throw BenchError("the copy in \(destination) does not verify") }
        return ms
    }

    /// The verification's read: every row of the store read in batches and digested.
    public static func readBack(_ location: StoreLocation, rows: Int) throws -> Double {
        let model = try BenchModel.make()
        let (count, ms) = try BenchClock.measure { () throws -> Int in
            let driver = try StoreOpener.openDriver(location, model: model, readOnly: true)
            defer { try? driver.close() }  // read-only: closing changes nothing
            let stream = RowStream(driver: driver)
            var count = 0
            for entity in model.entities {
                var digest = ContentDigest(entity: entity, model: model)
                try stream.forEachBatch(of: entity) { digest.add($0) }
                count += digest.count
                _ = digest.hexString
            }
            return count
        }
        let expected = storeRows(rows)
        guard count == expected else { throw BenchError("read \(count) rows of \(location), not \(expected)") }
        return ms
    }

    /// `strata export STORE --output FILE`.
    public static func export(_ location: StoreLocation, to file: URL, rows: Int) throws -> Double {
        let (summary, ms) = try BenchClock.measure { try InterchangeExporter.export(from: location, toFile: file.path) }
        let expected = storeRows(rows)
        guard summary.total == expected else { throw BenchError("exported \(summary.total) objects, not \(expected)") }
        return ms
    }

    /// `strata import FILE --to STORE --model MODEL` into a new store (an earlier round's removed
    /// first, untimed).
    public static func importFile(_ file: URL, into location: StoreLocation, model: URL, rows: Int) throws -> Double {
        if location.scheme == .postgres {
            try KnownDriver.postgres.removeStore(at: location.url)
        } else if let url = location.url, location.isFileBacked {
            for suffix in ["", "-wal", "-shm", "-journal", ".lock", "-lock"] {
                try? FileManager.default.removeItem(atPath: url.path + suffix)  // benchmark files only
            }
        }
        let (summary, ms) = try BenchClock.measure {
            try InterchangeImporter.importFile(atPath: file.path, into: location, modelPath: model.path)
        }
        let expected = storeRows(rows)
        guard summary.total == expected else { throw BenchError("imported \(summary.total) objects, not \(expected)") }
        return ms
    }

    /// `strata validate STORE`.
    public static func validate(_ location: StoreLocation) throws -> Double {
        let (problems, ms) = try BenchClock.measure { try StoreValidator.validate(location) }
        guard problems.isEmpty else { throw BenchError("\(location) has \(problems.count) problems: \(problems[0])") }
        return ms
    }

    /// W1 on `kind` at `rows`: one ``DriverBenchContender`` insert of the N items into a new store.
    public static func w1(_ kind: KnownDriver, rows: Int, in directory: URL) throws -> Double {
        guard let contender = try DriverBenchContender(kind: kind) else {
            throw BenchError("driver-\(kind.rawValue) cannot run: \(kind.unavailableReason ?? "unavailable")")
        }
        return try insertRound(
            contender, rows: rows, in: directory.appendingPathComponent("w1-\(kind.rawValue)-\(rows)"))
    }

    /// W1 through the whole stack on `kind` at `rows`: one ``StrataBenchContender`` insert of the N
    /// items (objects made in a context and saved), the `strata-X` W1 of the main table.
    public static func w1Objects(_ kind: KnownDriver, rows: Int, in directory: URL) throws -> Double {
        guard let contender = try StrataBenchContender(kind: kind) else {
            throw BenchError("strata-\(kind.rawValue) cannot run: \(kind.unavailableReason ?? "unavailable")")
        }
        return try insertRound(
            contender, rows: rows, in: directory.appendingPathComponent("w1-objects-\(kind.rawValue)-\(rows)"))
    }

    /// Times `contender` inserting the N items of the data of size `rows` into a new store in `round`.
    private static func insertRound(_ contender: any BenchContender, rows: Int, in round: URL) throws -> Double {
        try? FileManager.default.removeItem(at: round)  // an earlier round's store, if any
        try FileManager.default.createDirectory(at: round, withIntermediateDirectories: true)
        try contender.open(in: round)
        defer { try? contender.close() }  // a benchmark store, removed after
        let data = dataset(rows)
        let (outcome, ms) = try BenchClock.measure { try contender.insert(data.rows[...]) }
        guard outcome.rows == rows else { throw BenchError("W1 inserted \(outcome.rows) rows, not \(rows)") }
        return ms
    }

    /// Writes the benchmark model as a Strata model file in `directory` and returns it.
    public static func modelFile(in directory: URL) throws -> URL {
        let url = directory.appendingPathComponent("Bench.json")
        try BenchModel.make().encodedRepresentation().write(to: url)
        return url
    }
}
