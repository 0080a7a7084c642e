import Foundation

/// Runs the workloads over contenders, round after round, and collects the timings.
///
/// Each round uses fresh stores in a fresh directory under ``workDirectory``, so every round's W1
/// inserts into an empty store. Timings are medians and minimums over the rounds.
///
/// Thread safety: not `Sendable`; use one runner on one thread.
public struct BenchRunner {
    /// The rows of W1–W6 and W8 (N).
    public var dataset: BenchDataset
    /// How many rounds each workload runs.
    public var rounds: Int
    /// Where stores are created; each round's directories are removed after it.
    public var workDirectory: URL
    /// Called with a line of progress (contender, round) when set.
    public var progress: ((String) -> Void)?

    /// Creates a runner.
    public init(dataset: BenchDataset, rounds: Int, workDirectory: URL, progress: ((String) -> Void)? = nil) {
        self.dataset = dataset
        self.rounds = max(rounds, 1)
        self.workDirectory = workDirectory
        self.progress = progress
    }

    /// Runs every workload `rounds` times on `contender`.
    ///
    /// - Throws: whatever the contender throws; ``BenchError`` when a workload touches the wrong
    ///   number of rows or reads values that differ from the dataset.
    public func run(_ contender: any BenchContender) throws -> ContenderResult {
        var samples: [BenchWorkload: [Double]] = [:]
        var outcomes: [BenchWorkload: BenchOutcome] = [:]
        var bytesOnDisk: Int64 = 0
        for round in 1...rounds {
            progress?("\(contender.id): round \(round) of \(rounds)")
            let directory = workDirectory.appendingPathComponent(
                "\(contender.id)-\(round)-\(UUID().uuidString.prefix(8))")
            defer { try? FileManager.default.removeItem(at: directory) }
            func timed(_ workload: BenchWorkload, _ body: () throws -> BenchOutcome) throws {
                let (outcome, ms) = try BenchClock.measure(body)
                samples[workload, default: []].append(ms)
                outcomes[workload] = outcome
            }

            let main = try fresh(directory, "main")
            try contender.open(in: main)
            try timed(.insert) { try contender.insert(dataset.rows[...]) }
            bytesOnDisk = Self.size(of: main)
            try timed(.fetchAll) { try contender.fetchAll() }
            let (anyOutcome, anyMs) = try BenchClock.measure { try contender.fetchAllReadingAny() }
            if let anyOutcome {
                samples[.fetchAllAny, default: []].append(anyMs)
                outcomes[.fetchAllAny] = anyOutcome
            }
            try contender.prepareColdLookups()
            try timed(.lookupCold) { try contender.lookUp(dataset.lookupIDs, warm: false) }
            try timed(.lookupWarm) { try contender.lookUp(dataset.lookupIDs, warm: true) }
            try timed(.filtered) { try contender.fetchFiltered(ages: BenchDataset.ageRange) }
            try saveFew(contender, as: .saveFew, &samples, &outcomes)
            try timed(.update) { try contender.updateAll() }
            try timed(.delete) { try contender.deleteAll() }
            try contender.close()

            let small = try fresh(directory, "small")
            try contender.open(in: small)
            _ = try contender.insert(dataset.rows.prefix(BenchDataset.smallStoreRows))
            try saveFew(contender, as: .saveFewSmall, &samples, &outcomes)
            try contender.close()

            let graph = try fresh(directory, "graph")
            try contender.open(in: graph)
            try contender.insertGraph(dataset)
            // Each walk reads from the engine, as W3-cold does; dropping the cache is not the walk's work.
            try contender.prepareColdLookups()
            try timed(.graphFaulting) { try contender.walkGraph(prefetch: false) }
            try contender.prepareColdLookups()
            try timed(.graphPrefetch) { try contender.walkGraph(prefetch: true) }
            try contender.close()
            try verify(contender, outcomes)
        }
        let measurements = BenchWorkload.allCases.compactMap { w -> BenchMeasurement? in
            guard let s = samples[w], let o = outcomes[w] else { return nil }
            return BenchMeasurement(workload: w, rows: o.rows, checksum: o.checksum, samplesMs: s)
        }
        return ContenderResult(
            id: contender.id, engine: contender.engine, settings: contender.settings, rounds: rounds,
            measurements: measurements, bytesOnDisk: bytesOnDisk)
    }

    /// W8 and W8-1k: one sample is the mean of ``BenchDataset/saveRepetitions`` saves of 10 rows.
    private func saveFew(
        _ contender: any BenchContender, as workload: BenchWorkload,
        _ samples: inout [BenchWorkload: [Double]], _ outcomes: inout [BenchWorkload: BenchOutcome]
    ) throws {
        var total = 0.0
        var rows = 0
        for ids in dataset.changeSets {
            try contender.loadForChange(ids)
            let (outcome, ms) = try BenchClock.measure { try contender.saveChanged() }
            total += ms
            rows = outcome.rows
        }
        samples[workload, default: []].append(total / Double(dataset.changeSets.count))
        outcomes[workload] = BenchOutcome(rows: rows)
    }

    /// Checks row counts and checksums against the dataset, so a fast wrong answer never counts.
    private func verify(_ contender: any BenchContender, _ outcomes: [BenchWorkload: BenchOutcome]) throws {
        let n = dataset.rows.count
        let expected: [BenchWorkload: BenchOutcome] = [
            .insert: BenchOutcome(rows: n), .fetchAll: dataset.expectedFetchAll, .fetchAllAny: dataset.expectedFetchAll,
            .lookupCold: dataset.expectedLookups, .lookupWarm: dataset.expectedLookups,
            .filtered: dataset.expectedFiltered, .update: BenchOutcome(rows: n), .delete: BenchOutcome(rows: n),
            .saveFew: BenchOutcome(rows: 10), .saveFewSmall: BenchOutcome(rows: 10),
            .graphFaulting: dataset.expectedGraphWalk, .graphPrefetch: dataset.expectedGraphWalk,
        ]
        for (workload, want) in expected {
            guard let got = outcomes[workload] else { continue }
            if got.rows != want.rows || (want.checksum != 0 && got.checksum != want.checksum) {
                throw BenchError(
                    "\(contender.id) \(workload.rawValue): touched \(got.rows) rows (checksum \(got.checksum)), "
                        + "expected \(want.rows) (checksum \(want.checksum)); the contender is wrong, not slow")
            }
        }
    }

    private func fresh(_ directory: URL, _ name: String) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The bytes of every file under `url`.
    public static func size(of url: URL) -> Int64 {
        guard let walker = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.fileSizeKey]) else {
            return 0
        }
        var total: Int64 = 0
        for case let file as URL in walker {
            total += Int64((try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0)
        }
        return total
    }
}

/// What one contender measured.
public struct ContenderResult: Sendable, Codable, Hashable {
    /// The contender's identifier (``BenchContender/id``).
    public var id: String
    /// Its engine family.
    public var engine: String
    /// Its settings, in words.
    public var settings: String
    /// Rounds run.
    public var rounds: Int
    /// One measurement per workload, in workload order.
    public var measurements: [BenchMeasurement]
    /// Bytes of the store's files after W1 (N rows, journal or WAL included).
    public var bytesOnDisk: Int64
    /// Peak resident memory of the process that ran it, when measured (see docs/benchmarks.md).
    public var peakMemoryBytes: Int64?

    /// Creates a result.
    public init(
        id: String, engine: String, settings: String, rounds: Int, measurements: [BenchMeasurement],
        bytesOnDisk: Int64, peakMemoryBytes: Int64? = nil
    ) {
        self.id = id
        self.engine = engine
        self.settings = settings
        self.rounds = rounds
        self.measurements = measurements
        self.bytesOnDisk = bytesOnDisk
        self.peakMemoryBytes = peakMemoryBytes
    }

    /// This result and `other` (another run of the same contender) as one: each workload's
    /// samples together, the rounds added up, the higher peak memory.
    ///
    /// - Throws: ``BenchError`` when `other` is another contender, measured other workloads or
    ///   read different data (a checksum differs).
    public func pooled(with other: ContenderResult) throws -> ContenderResult {
        guard other.id == id, other.measurements.map(\.workload) == measurements.map(\.workload) else {
            throw BenchError("cannot pool \(other.id)'s results with \(id)'s: they are not runs of the same workloads")
        }
        var merged = self
        for (index, measurement) in other.measurements.enumerated() {
            guard measurement.checksum == measurements[index].checksum, measurement.rows == measurements[index].rows
            else {
                throw BenchError(
                    "\(id) read different data in two passes of \(measurement.workload.rawValue) (checksum \(measurements[index].checksum), then \(measurement.checksum))"
                )
            }
            merged.measurements[index].samplesMs += measurement.samplesMs
        }
        merged.rounds += other.rounds
        merged.peakMemoryBytes = [peakMemoryBytes, other.peakMemoryBytes].compactMap { $0 }.max()
        return merged
    }

    /// The measurement of `workload`, if it ran.
    public func measurement(_ workload: BenchWorkload) -> BenchMeasurement? {
        measurements.first { $0.workload == workload }
    }
}

/// A benchmark that could not run or gave a wrong answer.
public struct BenchError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
