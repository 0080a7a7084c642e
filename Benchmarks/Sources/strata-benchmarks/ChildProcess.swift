import BenchPeers
import Foundation
import StrataTools

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Peak memory is measured per contender by running each in a child process of this executable
/// (`--child ID`) and reading the child's own resident-set high-water mark when it is done
/// (`VmHWM`, ``MemoryAtRest/peakResidentBytes()``), which no other contender's allocations, nor
/// this parent's, can inflate.
enum ChildProcess {
    /// The child's resident-set high-water mark, in bytes.
    ///
    /// On Linux, `VmHWM` of /proc/self/status (``MemoryAtRest/peakResidentBytes()``): `ru_maxrss`
    /// survives `execve`, so it would start at the parent's high-water mark when the child was
    /// spawned, and every child spawned after the parent grew reported the parent's peak.
    static func peakResidentBytes() -> Int64 {
        #if canImport(Darwin)
            var usage = rusage()
            getrusage(RUSAGE_SELF, &usage)
            return Int64(usage.ru_maxrss)  // bytes on Darwin
        #else
            return MemoryAtRest.peakResidentBytes()
        #endif
    }

    /// Runs in the child: one contender (or the baseline), result as JSON on stdout.
    static func runChild(_ id: String, options: Options) throws {
        if try MemorySection.runChild(id, options: options) || ParallelSection.runChild(id, options: options)
            || RowScaling.runChild(id, options: options)
        {
            return
        }
        if id == migrationCopy {
            guard let store = options.store else { throw BenchError("\(id) needs --store PATH") }
            let run = try MigrationSection.copyInChild(store: store)
            guard run.strategy == "copy" else {
                throw BenchError("the migration of \(store.lastPathComponent) ran as \(run.strategy), not as a copy")
            }
            FileHandle.standardOutput.write(
                try JSONEncoder().encode([run.ms, Double(peakResidentBytes()), Double(run.anonymousPeak)]))
            return
        }
        if let kind = walkKinds[id] {
            guard let store = options.store, let type = kind.storeType else {
                throw BenchError("\(id) needs --store PATH and its driver")
            }
            let walk = try ResultsSection.walkBatched(store: store, type: type)
            FileHandle.standardOutput.write(
                try JSONEncoder().encode([
                    Double(walk.rows), Double(walk.growth), walk.seconds, Double(walk.anonymousGrowth),
                    Double(walk.afterFetch), Double(walk.mappedStore),
                ]))
            return
        }
        if id == xmlAtRest {
            guard let store = options.store else { throw BenchError("\(id) needs --store PATH") }
            let perObject = try MemoryAtRest.xml(store: store, rows: options.rows)
            FileHandle.standardOutput.write(try JSONEncoder().encode([perObject]))
            return
        }
        let dataset = BenchDataset(rows: options.rows)
        var result: ContenderResult
        if id == ContenderCatalog.baseline {
            result = ContenderResult(
                id: id, engine: "none", settings: "the dataset alone, no store", rounds: 0, measurements: [],
                bytesOnDisk: 0)
            withExtendedLifetime(dataset) {}
        } else {
            let work = try workDirectory()
            defer { try? FileManager.default.removeItem(at: work) }
            let runner = BenchRunner(dataset: dataset, rounds: options.rounds, workDirectory: work) { line in
                FileHandle.standardError.write(Data("  \(line)\n".utf8))
            }
            result = try runner.run(try ContenderCatalog.make(id))
        }
        result.peakMemoryBytes = peakResidentBytes()
        let data = try JSONEncoder().encode(result)
        FileHandle.standardOutput.write(data)
    }

    /// Runs `id` in a child process and returns its result.
    static func run(_ id: String, options: Options) throws -> ContenderResult {
        try JSONDecoder().decode(ContenderResult.self, from: output(id, options: options))
    }

    /// The child that opens the XML store at `--store` with the XML driver alone and reports
    /// resident bytes per row.
    static let xmlAtRest = "xml-at-rest"

    /// The child that migrates the LMDB store at `--store` by copying and reports its time and peak
    /// resident bytes.
    static let migrationCopy = "migration-copy"

    /// Runs the copying-migration child on `store` of `rows` rows: ms, peak resident bytes, and the
    /// largest anonymous resident bytes seen at a batch.
    static func migrationCopy(store: URL, rows: Int, options: Options) throws -> (
        ms: Double, peak: Int64, anonymousPeak: Int64
    ) {
        var childOptions = options
        childOptions.rows = rows
        let values = try JSONDecoder().decode(
            [Double].self, from: output(migrationCopy, options: childOptions, store: store))
        guard values.count == 3 else { throw BenchError("\(migrationCopy) reported \(values)") }
        return (values[0], Int64(values[1]), Int64(values[2]))
    }

    /// The children that walk a store with `fetchBatchSize = 500`, by driver.
    static let walkKinds: [String: KnownDriver] = ["walk-sqlite": .sqlite, "walk-lmdb": .lmdb]

    /// Runs a batched-walk child on `store` and returns what it measured.
    static func walk(_ id: String, store: URL, options: Options) throws -> ResultsSection.Walk {
        let values = try JSONDecoder().decode([Double].self, from: output(id, options: options, store: store))
        guard values.count == 6 else { throw BenchError("\(id) reported \(values.count) figures, not 6") }
        return ResultsSection.Walk(
            rows: Int(values[0]), growth: Int64(values[1]), anonymousGrowth: Int64(values[3]),
            afterFetch: Int64(values[4]), mappedStore: Int64(values[5]), seconds: values[2])
    }

    /// Runs the `xmlAtRest` child on the store at `store`.
    static func bytesPerObject(_ id: String, store: URL?, options: Options) throws -> Double {
        let values = try JSONDecoder().decode([Double].self, from: output(id, options: options, store: store))
        guard let value = values.first else { throw BenchError("\(id) reported nothing") }
        return value
    }

    /// Runs `id` in a child process and returns what it printed on stdout.
    static func output(_ id: String, options: Options, store: URL? = nil) throws -> Data {
        try output(id, rows: options.rows, rounds: options.rounds, store: store)
    }

    /// Runs `id` in a child process with `--rows rows` (and `--rounds`, `--store` when given) and
    /// returns what it printed on stdout.
    ///
    /// - Throws: ``BenchError`` naming the child when it exits with a failure.
    static func output(_ id: String, rows: Int, rounds: Int? = nil, store: URL? = nil) throws -> Data {
        let process = Process()
        #if os(Linux)
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        #else
            process.executableURL = Bundle.main.executableURL
        #endif
        var arguments = ["--child", id, "--rows", String(rows)]
        if let rounds { arguments += ["--rounds", String(rounds)] }
        if let store { arguments += ["--store", store.path] }
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.standardError
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError(
                "\(id) at \(rows) rows failed in its child process (exit status \(process.terminationStatus)); see the messages above"
            )
        }
        return data
    }

    /// A fresh directory for stores, under the system's temporary directory.
    static func workDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strata-benchmarks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
