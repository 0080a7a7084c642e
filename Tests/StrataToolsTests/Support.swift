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
func runStrata(_ arguments: [String], in directory: URL? = nil, input: Data? = nil, umask: String? = nil) throws
    -> ProcessResult
{
    let bundle = Bundle.main.bundleURL
    var folder = bundle
    var binary = folder.appendingPathComponent("strata")
    while !FileManager.default.isExecutableFile(atPath: binary.path), folder.path != "/" {
        folder = folder.deletingLastPathComponent()
        binary = folder.appendingPathComponent("strata")
    }
    let process = Process()
    if let umask {
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "umask \(umask) && exec \"$0\" \"$@\"", binary.path] + arguments
    } else {
        process.executableURL = binary
        process.arguments = arguments
    }
    if let directory { process.currentDirectoryURL = directory }
    var environment = ProcessInfo.processInfo.environment
    environment["COLUMNS"] = "100"
    process.environment = environment
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // Read both pipes concurrently so a full stderr pipe cannot block the child.
    let errorData = ErrorBox()
    let reader = Thread { errorData.set(err.fileHandleForReading.readDataToEndOfFile()) }
    reader.start()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let stderr = errorData.wait()
    return ProcessResult(
        status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
        stderr: String(decoding: stderr, as: UTF8.self))
}

/// Hands a pipe's data from a reader thread to the test.
final class ErrorBox: @unchecked Sendable {
    // @unchecked Sendable: `data` is written once under `condition` and read after the signal.
    private let condition = NSCondition()
    private var data: Data?

    func set(_ value: Data) {
        condition.lock()
        data = value
        condition.signal()
        condition.unlock()
    }

    func wait() -> Data {
        condition.lock()
        defer { condition.unlock() }
        while data == nil { condition.wait() }
        return data ?? Data()
    }
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
