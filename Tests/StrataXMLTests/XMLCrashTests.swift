import Foundation
import Strata
import StrataTesting
import StrataXML
import Testing

@Suite("XML crash safety")
struct XMLCrashTests {
    /// The model `strata-xml-killtest` saves with.
    static let model: ManagedObjectModel = {
        let counter = EntityDescription(
            "Counter",
            properties: [.attribute("value", .integer64), .toMany("items", "Item", inverse: "counter", deleteRule: .cascade)])
        let item = EntityDescription(
            "Item",
            properties: [
                .attribute("index", .integer64), .attribute("payload", .string),
                .toOne("counter", "Counter", inverse: "items"),
            ])
        return try! ManagedObjectModel(entities: [counter, item])  // the helper's fixed, valid model
    }()

    /// The helper executable, built beside the test bundle.
    static func helper() throws -> URL {
        var candidates = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()]
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        candidates.append(root.appendingPathComponent(".build/debug"))
        for directory in candidates {
            let url = directory.appendingPathComponent("strata-xml-killtest")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw StoreError(.notFound, "strata-xml-killtest is not built; run swift build --build-tests")
    }

    /// The counter value of the store and its items' indexes, checking the helper's invariant.
    static func savedState(_ url: URL) throws -> Int {
        guard FileManager.default.fileExists(atPath: url.path) else { return 0 }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .xml, at: url, options: StoreOptions(isReadOnly: true))
        defer { try? coordinator.remove(store) }
        let context = ManagedObjectContext(coordinator: coordinator)
        let counters = try context.fetch(FetchRequest(entityName: "Counter"))
        guard let counter = counters.first else { return 0 }
        #expect(counters.count == 1)
        let value = try #require(counter["value"] as? Int)
        let indexes = counter.objects(forKey: "items").compactMap { $0["index"] as? Int }.sorted()
        #expect(indexes == Array(max(1, value - 49)...value), "items of saved state \(value)")
        #expect(try context.count(for: FetchRequest(entityName: "Item")) == indexes.count, "items without a counter")
        return value
    }

    @Test("killing a process that saves in a loop, 50 times at random moments, always leaves a complete saved state")
    func killWhileSaving() throws {
        let helper = try Self.helper()
        let directory = try TemporaryDirectory(prefix: "xml-kill")
        let url = directory.file("killed.xml")
        var known = 0
        var kills = 0
        var attempts = 0
        while kills < 50 {
            attempts += 1
            try #require(attempts < 200, "the helper keeps exiting before it is killed")
            let process = Process()
            process.executableURL = helper
            process.arguments = [url.path]
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            usleep(UInt32.random(in: 40_000...300_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let failure = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            try #require(failure.isEmpty, "helper failed: \(failure)")
            if process.terminationReason == .uncaughtSignal { kills += 1 }
            let lastPrinted = printed.split(separator: "\n").compactMap { Int($0.dropFirst("saved ".count)) }.last ?? known
            let value = try Self.savedState(url)
            // The save after the last printed line may have reached the disk before the kill.
            #expect(value == lastPrinted || value == lastPrinted + 1, "file holds \(value), last save printed \(lastPrinted)")
            #expect(value >= known, "a saved state was lost: \(value) < \(known)")
            known = value
        }
        #expect(known > 50, "the helper made progress between kills")
    }
}
