import Foundation
import Strata
import StrataInMemory
import StrataTesting
import StrataTools
import Testing

struct ProcessResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs the `strata` executable built beside the test bundle, in `directory` when given.
/// With `umask`, the binary runs under `/bin/sh` with that file-creation mask.
func runStrata(_ arguments: [String], in directory: URL? = nil, umask: String? = nil) throws
    -> ProcessResult
{
    let bundle = Bundle.main.bundleURL
    var folder = bundle
    var binary = folder.appendingPathComponent("strata")
    while !FileManager.default.isExecutableFile(atPath: binary.path), folder.path != "/" {
        folder = folder.deletingLastPathComponent()
        binary = folder.appendingPathComponent("strata")
    }
    let line =
        umask.map { ["/bin/sh", "-c", "umask \($0) && exec \"$0\" \"$@\"", binary.path] + arguments }
        ?? [binary.path] + arguments
    // posix_spawn and waitpid (StrataTesting.ChildProcess), not Foundation's Process: see there.
    let run = try ChildProcess.capture(
        line, directory: directory?.path ?? FileManager.default.currentDirectoryPath, environment: ["COLUMNS": "100"])
    return ProcessResult(
        status: run.termination.status, stdout: String(decoding: run.output, as: UTF8.self),
        stderr: String(decoding: run.errors, as: UTF8.self))
}

/// A process-unique in-memory store location (`memory:NAME`).
func memoryLocation(_ name: String = "store") -> StoreLocation {
    StoreLocation(scheme: .memory, url: URL(string: "memory:\(name)-\(UUID().uuidString)"))
}

/// Creates a store at `location` (any driver) holding the conformance model's seed data, and closes it.
@discardableResult
func seededMemoryStore(_ location: StoreLocation = memoryLocation("seeded")) throws -> StoreLocation {
    let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
    let store = try coordinator.addPersistentStore(type: try location.storeType(), at: location.url)
    let context = ManagedObjectContext(coordinator: coordinator)
    try ConformanceModel.seed(context)
    try context.save()
    try coordinator.remove(store)
    return location
}

/// Writes the conformance model as a Strata model file and returns its path.
func writeConformanceModel(in directory: TemporaryDirectory) throws -> String {
    let url = directory.file("Conformance.json")
    try ConformanceModel.model.encodedRepresentation().write(to: url)
    return url.path
}

/// The demo's model written as a Strata model file.
func writeDemoModel(in directory: TemporaryDirectory) throws -> String {
    let url = directory.file("Demo.json")
    try Demo.makeModel().encodedRepresentation().write(to: url)
    return url.path
}

/// The location of a file store of `scheme` in `directory`.
func fileLocation(_ scheme: KnownDriver, _ name: String, in directory: TemporaryDirectory) -> StoreLocation {
    let ext = scheme == .sqlite ? "sqlite" : scheme.rawValue
    return StoreLocation(scheme: scheme, url: directory.file("\(name).\(ext)"))
}

extension Trait where Self == ConditionTrait {
    /// Runs a test only when `STRATA_CORPUS` names the corpus folder.
    static var needsCorpus: Self {
        .enabled(if: ProcessInfo.processInfo.environment["STRATA_CORPUS"] != nil, "STRATA_CORPUS is not set")
    }
}

/// Every corpus model file, when `STRATA_CORPUS` is set.
func corpusModelFiles() throws -> [URL] {
    let folder = URL(fileURLWithPath: try #require(ProcessInfo.processInfo.environment["STRATA_CORPUS"]))
        .appendingPathComponent("models")
    return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        .filter { $0.lastPathComponent.hasSuffix(".xcdatamodel.xml") }
        .sorted { $0.lastPathComponent < $1.lastPathComponent }
}

/// Parses a tool's JSON output.
func parseJSON(_ text: String) throws -> JSONValue { try JSONParser.parse(Data(text.utf8)) }
