import BenchPeers
import Foundation
import StrataTesting
import StrataTools

// strata-benchmarks: Strata on every linked driver against raw SQLite, raw LMDB and GRDB.
// See docs/benchmarks.md. Each contender runs in a child process of this executable so its peak
// memory can be read on its own (ChildProcess.swift).

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("strata-benchmarks: \(message)\n".utf8))
    exit(status)
}

func log(_ message: String) { FileHandle.standardError.write(Data("\(message)\n".utf8)) }

let options: Options
do {
    options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    fail("\(error)", status: 64)
}

if let child = options.child {
    do {
        if child.hasPrefix(ToolSectionRun.childPrefix) {
            try ToolSectionRun.runChild(child, options: options)
            exit(0)
        }
        if child == PostgresScaling.child {
            guard let url = options.writerURL else { fail("\(child) needs --writer-url", status: 64) }
            try PostgresScaling.runWriter(url: url, saves: options.writerSaves)
            exit(0)
        }
        try ChildProcess.runChild(child, options: options)
        exit(0)
    } catch {
        fail("\(child): \(error)", status: 1)
    }
}

/// The JSON file's shape: the flat results for machines plus the full report for `--check-file`.
struct SavedResults: Codable {
    var machine: Machine
    var report: BenchReport
    var baseline: ContenderResult?
    /// The XML section, when it ran.
    var xml: XMLSectionResult?
    /// The contexts section, when it ran.
    var contexts: ContextSectionResult?
    /// The PostgreSQL writer-processes run, when it ran.
    var scaling: PostgresScaling.Result?
    /// The migration section, when it ran.
    var migration: MigrationSectionResult?
    /// The results section, when it ran.
    var results: ResultsSectionResult?
    /// The memory section, when it ran.
    var memory: MemorySectionResult?
    /// The parallel readers, when they ran.
    var parallel: ParallelSectionResult?
    /// The tool section, when it ran.
    var tool: ToolSectionResult?
}

func writeOutputs(_ saved: SavedResults, checks: [CheckResult]) throws {
    try FileManager.default.createDirectory(at: options.output, withIntermediateDirectories: true)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    let savedObject = try JSONSerialization.jsonObject(with: encoder.encode(saved))
    let checksObject = try JSONSerialization.jsonObject(with: encoder.encode(checks))
    let json = try saved.report.flatJSON(extra: ["full": savedObject, "checks": checksObject])
    try json.write(to: options.output.appendingPathComponent("results.json"), atomically: true, encoding: .utf8)
    let sections = [saved.memory.map(MemorySection.markdown), saved.parallel.map(ParallelSection.markdown)]
    var markdown = ResultsReport.markdown(
        saved.report, machine: saved.machine, baseline: saved.baseline, xml: saved.xml,
        sections: sections.compactMap { $0 }, checks: checks)
    if let tool = saved.tool { markdown += "\n" + ToolSectionRun.markdown(tool) }
    if let scaling = saved.scaling {
        markdown += "\n" + PostgresScaling.markdown(scaling) + "\n"
        try PostgresScaling.svg(scaling, machine: saved.machine).write(
            to: options.output.appendingPathComponent("postgres-scaling.svg"), atomically: true, encoding: .utf8)
        _ = renderPNG(options.output.appendingPathComponent("postgres-scaling.svg"))
    }
    try markdown.write(to: options.output.appendingPathComponent("results.md"), atomically: true, encoding: .utf8)
    try Chart.svg(saved.report, machine: saved.machine).write(
        to: options.output.appendingPathComponent("chart.svg"), atomically: true, encoding: .utf8)
    print(markdown)
    let png = renderPNG(options.output.appendingPathComponent("chart.svg"))
    log("wrote \(options.output.path)/results.md, results.json, chart.svg\(png ? " and chart.png" : "")")
}

/// Renders the chart to PNG with rsvg-convert when it is installed (apt: librsvg2-bin); best effort.
func renderPNG(_ svg: URL) -> Bool {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
        "rsvg-convert", "-o", svg.deletingPathExtension().appendingPathExtension("png").path, svg.path,
    ]
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return false }
    process.waitUntilExit()
    if process.terminationStatus != 0 { log("chart.png not rendered: install librsvg2-bin for rsvg-convert") }
    return process.terminationStatus == 0
}

func finish(_ checks: [CheckResult]) -> Never {
    guard options.check || options.checkFile != nil else { exit(0) }
    if options.checkFile != nil { print(Check.text(checks)) }  // a run already printed them in its report
    let notMet = checks.filter { $0.status == .notMet }.count
    let met = checks.filter { $0.status == .met }.count
    let unmeasured = checks.filter { $0.status == .notMeasured }.count
    let info = checks.filter { $0.status == .info }.count
    print("\n\(met) met, \(notMet) not met, \(unmeasured) not measured, \(info) for information")
    exit(notMet == 0 ? 0 : 1)
}

if let file = options.checkFile {
    do {
        let data = try Data(contentsOf: file)
        if let scaling = try? JSONDecoder().decode(RowScalingResult.self, from: data) {
            finish(RowScaling.targets(scaling))  // a scaling.json
        }
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any], let full = object["full"]
        else {
            fail("\(file.path) is neither a results.json nor a scaling.json written by strata-benchmarks", status: 1)
        }
        let saved = try JSONDecoder().decode(SavedResults.self, from: JSONSerialization.data(withJSONObject: full))
        finish(
            Check.evaluate(
                saved.report, xml: saved.xml, contexts: saved.contexts, scaling: saved.scaling,
                migration: saved.migration, results: saved.results, memory: saved.memory, parallel: saved.parallel)
                + ToolSectionRun.checks(saved.tool))
    } catch {
        fail("cannot read \(file.path): \(error)", status: 1)
    }
}

/// The XML figures: a store of N objects built with the XML driver (untimed); its open and save
/// timed against libxml2's streaming reader and a write of the same bytes with fsync; the XML
/// driver's memory per row at rest measured in a child process of its own (not with --in-process).
func runXMLSection() throws -> XMLSectionResult {
    log("running the XML section (\(options.rows) objects)")
    let work = try ChildProcess.workDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let store = try XMLSection.build(BenchDataset(rows: options.rows, parents: 0), in: work)
    var result = try XMLSection.run(store: store, rows: options.rows, rounds: options.rounds)
    if !options.inProcess {
        result.xmlBytesPerObject = try ChildProcess.bytesPerObject(
            ChildProcess.xmlAtRest, store: store, options: options)
    }
    return result
}

/// The throwaway PostgreSQL server of this run, stopped at exit.
/// `nonisolated(unsafe)`: written once below, before any thread or exit handler reads it.
nonisolated(unsafe) var postgresServer: PostgreSQLTestServer?
if options.contenders.contains(where: ContenderCatalog.needsPostgres), KnownDriver.postgresServer == nil {
    log("starting a throwaway PostgreSQL server (server defaults: fsync=on, synchronous_commit=on; autovacuum off)")
    do {
        // Autovacuum off: its run after a contender's 100,000 inserts would land on whichever
        // workload comes next, faster contenders' sooner.
        let server = try PostgreSQLTestServer(durable: true, settings: ["autovacuum = off"])
        postgresServer = server
        // Children inherit it through the environment.
        setenv(KnownDriver.postgresServerVariable, server.url(schema: "public").absoluteString, 1)
        atexit { postgresServer?.stop() }
    } catch {
        log("PostgreSQL contenders will be skipped: \(error)")
    }
}

/// The migration figures (the targets fix the sizes; --rows does not change them): (a) on a SQLite
/// store of 1,000,000 rows, (b) a copying LMDB migration at 100,000 and 1,000,000 rows, each in a
/// child process of its own.
func runMigrationSection() throws -> MigrationSectionResult {
    let rows = 1_000_000
    log("running the migration section (\(rows) rows)")
    let work = try ChildProcess.workDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    var result = try MigrationSection.addColumn(rows: rows, rounds: options.rounds, in: work, log: log)
    for size in [100_000, 1_000_000] {
        let directory = work.appendingPathComponent("copy-\(size)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        log("  building an LMDB store of \(size) items")
        let store = try MigrationSection.build(.lmdb, rows: size, in: directory)
        let run = try ChildProcess.migrationCopy(store: store, rows: size, options: options)
        result.copyMs[size] = run.ms
        result.copyPeakBytes[size] = run.peak
        result.copyAnonymousPeakBytes[size] = run.anonymousPeak
        result.copyStrategy = "copy"
        log(
            "  copying migration of \(size) rows: \(String(format: "%.0f", run.ms)) ms, peak \(run.peak / 1_048_576) MiB, anonymous peak \(run.anonymousPeak / 1_048_576) MiB"
        )
    }
    // (c), information: the same on SQLite, which copies when entity numbers change.
    var sqliteMs: [Int: Double] = [:]
    var sqlitePeak: [Int: Int64] = [:]
    var sqliteAnonymous: [Int: Int64] = [:]
    for size in [100_000, 1_000_000] {
        let directory = work.appendingPathComponent("copy-sqlite-\(size)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        log("  building a SQLite store of \(size) items")
        let store = try MigrationSection.build(.sqlite, rows: size, in: directory)
        let run = try ChildProcess.migrationCopy(store: store, rows: size, options: options)
        (sqliteMs[size], sqlitePeak[size], sqliteAnonymous[size]) = (run.ms, run.peak, run.anonymousPeak)
        log(
            "  copying SQLite migration of \(size) rows: \(String(format: "%.0f", run.ms)) ms, peak \(run.peak / 1_048_576) MiB, anonymous peak \(run.anonymousPeak / 1_048_576) MiB"
        )
    }
    (result.sqliteCopyMs, result.sqliteCopyPeakBytes, result.sqliteCopyAnonymousPeakBytes) =
        (sqliteMs, sqlitePeak, sqliteAnonymous)
    return result
}

/// The results figures: batch insert and the fetched results controller timed in this process; the
/// batched walk of --walk-rows rows on SQLite and LMDB, each store built here (untimed) and walked
/// in a child process of its own so its peak resident set is the walk's alone.
func runResultsSection() throws -> ResultsSectionResult {
    log("running the results section (\(options.rows) objects; batched walk of \(options.walkRows) rows)")
    let work = try ChildProcess.workDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    var result = try ResultsSection.run(rows: options.rows, rounds: options.rounds, in: work)
    result.walkedRows = options.walkRows
    for (id, kind) in ChildProcess.walkKinds.sorted(by: { $0.key < $1.key }) {
        guard let type = kind.storeType else {
            log("  skipping \(id): its driver is not linked")
            continue
        }
        let store = work.appendingPathComponent("walk-\(kind.rawValue).store")
        log("  building \(options.walkRows) rows for \(id)")
        try ResultsSection.buildWalkStore(rows: options.walkRows, type: type, at: store)
        let walk = try ChildProcess.walk(id, store: store, options: options)
        guard walk.rows == options.walkRows else {
            throw BenchError("\(id) walked \(walk.rows) rows, not \(options.walkRows)")
        }
        result.walkGrowthBytes[kind.rawValue] = walk.growth
        result.walkSeconds[kind.rawValue] = walk.seconds
    }
    return result
}

if options.scaling {
    do {
        let machine = Machine.current()
        log("strata-benchmarks --scaling: \(options.scalingRows) rows, \(options.rounds) rounds on \(machine.summary)")
        let result = try RowScaling.run(
            contenders: options.contenders, sizes: options.scalingRows, options: options, log: log)
        let checks = RowScaling.targets(result)
        try FileManager.default.createDirectory(at: options.output, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(result).write(to: options.output.appendingPathComponent("scaling.json"))
        let markdown = RowScaling.markdown(result, machine: machine, checks: checks)
        try markdown.write(to: options.output.appendingPathComponent("scaling.md"), atomically: true, encoding: .utf8)
        let svg = options.output.appendingPathComponent("scaling.svg")
        try RowScalingChart.svg(result, machine: machine).write(to: svg, atomically: true, encoding: .utf8)
        print(markdown)
        log(
            "wrote \(options.output.path)/scaling.md, scaling.json, scaling.svg\(renderPNG(svg) ? " and scaling.png" : "")"
        )
        finish(checks)
    } catch {
        fail("\(error)", status: 1)
    }
}

var report = BenchReport(rows: options.rows, rounds: options.rounds * options.passes)
var baseline: ContenderResult?
let machine = Machine.current()
log(
    "strata-benchmarks: \(options.rows) rows, \(options.rounds) rounds × \(options.passes) passes on \(machine.summary)"
)
do {
    if !options.inProcess { baseline = try ChildProcess.run(ContenderCatalog.baseline, options: options) }
    var runnable: [String] = []
    for id in options.contenders where id != ContenderCatalog.baseline {
        if let reason = ContenderCatalog.unavailableReason(id) {
            log("skipping \(id): \(reason)")
            report.skipped.append(.init(id: id, reason: reason))
        } else {
            runnable.append(id)
        }
    }
    // Each pass runs every contender once; a contender's passes are pooled into one result.
    var pooled: [String: ContenderResult] = [:]
    for pass in 1...options.passes {
        for id in runnable {
            log(options.passes > 1 ? "running \(id) (pass \(pass) of \(options.passes))" : "running \(id)")
            let (result, ms) = try BenchClock.measure { () throws -> ContenderResult in
                if options.inProcess {
                    let work = try ChildProcess.workDirectory()
                    defer { try? FileManager.default.removeItem(at: work) }
                    let runner = BenchRunner(
                        dataset: BenchDataset(rows: options.rows), rounds: options.rounds, workDirectory: work
                    ) {
                        log("  \($0)")
                    }
                    return try runner.run(try ContenderCatalog.make(id))
                }
                return try ChildProcess.run(id, options: options)
            }
            log("  \(id) done in \(String(format: "%.1f", ms / 1000)) s")
            pooled[id] = try pooled[id].map { try $0.pooled(with: result) } ?? result
        }
    }
    // Every runnable contender ran in every pass.
    report.contenders = runnable.map { pooled[$0]! }
    var xml: XMLSectionResult?
    if options.contenders.contains(where: { $0 == "strata-xml" || $0 == "driver-xml" }),
        KnownDriver.xml.storeType != nil
    {
        xml = try runXMLSection()
    }
    var contexts: ContextSectionResult?
    if options.contexts {
        log("running the contexts section (\(options.rows) objects)")
        let work = try ChildProcess.workDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        contexts = try ContextSection.run(rows: options.rows, rounds: options.rounds, in: work)
    }
    let memory = options.inProcess ? nil : try MemorySection.run(contenders: runnable, options: options, log: log)
    let parallel = try ParallelSection.run(contenders: runnable, options: options, log: log)
    var scaling: PostgresScaling.Result?
    if runnable.contains("strata-postgres"), let server = KnownDriver.postgresServer {
        log("running the PostgreSQL writer processes (1, 2 and 4, \(options.scalingSaves) saves each)")
        scaling = try PostgresScaling.run(server: server, savesPerWriter: options.scalingSaves, log: log)
    }
    var migration: MigrationSectionResult?
    if options.migration { migration = try runMigrationSection() }
    var results: ResultsSectionResult?
    if options.results { results = try runResultsSection() }
    var tool: ToolSectionResult?
    if let sizes = options.toolSizes {
        log("running the tool section (\(sizes.map(String.init).joined(separator: ", ")) rows)")
        tool = try ToolSectionRun.run(sizes: sizes, options: options, log: log)
    }
    let checks =
        Check.evaluate(
            report, xml: xml, contexts: contexts, scaling: scaling, migration: migration, results: results,
            memory: memory, parallel: parallel)
        + ToolSectionRun.checks(tool)
    try writeOutputs(
        SavedResults(
            machine: machine, report: report, baseline: baseline, xml: xml, contexts: contexts, scaling: scaling,
            migration: migration, results: results, memory: memory, parallel: parallel, tool: tool),
        checks: checks)
    finish(checks)
} catch {
    fail("\(error)", status: 1)
}
