import Foundation
import Strata
import StrataInMemory
import StrataTesting
import StrataTools
import Testing

/// Digests of every entity of a store, by entity name.
func digests(_ location: StoreLocation, model: ManagedObjectModel = ConformanceModel.model) throws -> [String: String] {
    let driver = try StoreOpener.openDriver(location, model: model, readOnly: true)
    defer { try? driver.close() }
    let stream = RowStream(driver: driver, batchSize: 7)
    var result: [String: String] = [:]
    for entity in model.entities {
        var digest = ContentDigest(entity: entity, model: model)
        try stream.forEachBatch(of: entity) { digest.add($0) }
        result[entity.name] = "\(digest.count):\(digest.hexString)"
    }
    return result
}

@Suite("strata convert (library)")
struct ConvertLibraryTests {
    @Test("A → B → A equals A: every entity's count and digest, the store UUID and the primary keys")
    func roundTrip() throws {
        let a = try seededMemoryStore()
        let b = memoryLocation("b")
        let back = memoryLocation("back")
        let first = try StoreConverter.convert(from: a, to: b, options: ConversionOptions(batchSize: 3))
        #expect(first.isVerified)
        #expect(
            first.entities.first { $0.name == "Employee" }?.destinationCount == ConformanceModel.employeeNames.count)
        let second = try StoreConverter.convert(from: b, to: back)
        #expect(second.isVerified)
        #expect(try digests(a) == digests(back))
        #expect(try StoreOpener.metadata(at: a)?.uuid == StoreOpener.metadata(at: back)?.uuid)
    }

    @Test("the converted store never hands out a copied primary key again")
    func allocatorReserved() throws {
        let a = try seededMemoryStore()
        let b = memoryLocation("b")
        try StoreConverter.convert(from: a, to: b)
        let (coordinator, _) = try StoreOpener.attach(b, model: ConformanceModel.model, readOnly: false)
        let context = ManagedObjectContext(coordinator: coordinator)
        let existing = try context.fetch(FetchRequest(entityName: "Employee")).map(\.objectID.primaryKey)
        let employee = try context.insertNewObject(forEntityName: "Employee")
        employee["name"] = "New"
        try context.save()
        #expect(employee.objectID.primaryKey > existing.max() ?? 0)
    }

    @Test(
        "an ordered one-to-many whose members are copied after their owner keeps its order in SQLite (round-trip seed 1)"
    )
    func orderedMembersCopiedLater() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Album", properties: [.toMany("tracks", "Track", inverse: "album", ordered: true)]),
            EntityDescription(
                "Track", properties: [.attribute("title", .string), .toOne("album", "Album", inverse: "tracks")]),
        ])
        let source = memoryLocation("ordered")
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(type: try source.storeType(), at: source.url)
            let context = ManagedObjectContext(coordinator: coordinator)
            let tracks = try ["one", "two", "three"].map { title in
                let track = try context.insertNewObject(forEntityName: "Track")
                track["title"] = title
                return track
            }
            let album = try context.insertNewObject(forEntityName: "Album")
            album.setValue([tracks[2], tracks[0], tracks[1]], forKey: "tracks")
            try context.save()
            try coordinator.remove(store)
        }
        let directory = try TemporaryDirectory()
        let destination = fileLocation(.sqlite, "ordered", in: directory)
        // One row per batch: the album's batch comes before any track is copied.
        let report = try StoreConverter.convert(from: source, to: destination, options: ConversionOptions(batchSize: 1))
        #expect(report.isVerified)
        let (coordinator, _) = try StoreOpener.attach(destination, model: model, readOnly: true)
        let context = ManagedObjectContext(coordinator: coordinator)
        let album = try #require(try context.fetch(FetchRequest(entityName: "Album")).first)
        #expect(album.objects(forKey: "tracks").map { $0["title"] as? String } == ["three", "one", "two"])
    }

    @Test("a configuration limits the copy to its entities")
    func configuration() throws {
        let a = try seededMemoryStore()
        let report = try StoreConverter.convert(
            from: a, to: memoryLocation(), options: ConversionOptions(configuration: "Staff"))
        #expect(report.entities.map(\.name) == ["Department", "Employee"])
        #expect(report.isVerified)
    }

    @Test("progress reaches the total, entity by entity")
    func progress() throws {
        let a = try seededMemoryStore()
        let box = ProgressLog()
        _ = try StoreConverter.convert(
            from: a, to: memoryLocation(), options: ConversionOptions(batchSize: 4, progress: { box.events.append($0) })
        )
        let last = try #require(box.events.last)
        #expect(last.copied == last.total)
        #expect(last.total > 40)
        #expect(Set(box.events.map(\.entity)).count == ConformanceModel.model.entities.count)
    }

    @Test("mistakes are usage errors: unknown configuration, existing destination, source without a model")
    func mistakes() throws {
        let a = try seededMemoryStore()
        #expect {
            try StoreConverter.convert(from: a, to: memoryLocation(), options: ConversionOptions(configuration: "Nope"))
        } throws: { ($0 as? ToolError)?.exitCode == 64 && "\($0)".contains("Nope") }
        let taken = try seededMemoryStore()
        #expect { try StoreConverter.convert(from: a, to: taken) } throws: { ($0 as? ToolError)?.exitCode == 64 }
        #expect { try StoreConverter.convert(from: memoryLocation("empty"), to: memoryLocation()) } throws: {
            ($0 as? ToolError)?.exitCode == 64 && "\($0)".contains("--model")
        }
        #expect { try StoreConverter.convert(from: a, to: a) } throws: { ($0 as? ToolError)?.exitCode == 64 }
    }

    @Test("the progress bar shows percentage, rows, rate and ETA")
    func progressBarLine() {
        let line = ProgressBar.barLine(
            ConversionProgress(entity: "Person", entityCopied: 50, entityTotal: 100, copied: 500, total: 1000),
            elapsed: 2)
        #expect(line == "[###############---------------]  50%  500/1000 rows  250 rows/s  ETA 0:02  Person")
        var plain: [String] = []
        let bar = ProgressBar(isTerminal: false) { plain.append($0) }
        bar.update(ConversionProgress(entity: "A", entityCopied: 1, entityTotal: 2, copied: 1, total: 3))
        bar.update(ConversionProgress(entity: "A", entityCopied: 2, entityTotal: 2, copied: 2, total: 3))
        #expect(plain == ["copied A: 2 rows (2/3)\n"])
    }
}

final class ProgressLog: @unchecked Sendable {
    // @unchecked Sendable: written only from the converting thread, read after it returns.
    var events: [ConversionProgress] = []
}

/// Pairs of file-backed drivers registered in this build (every ordered pair, same driver included).
let fileDriverPairs: [(KnownDriver, KnownDriver)] = KnownDriver.fileBacked.flatMap { a in
    KnownDriver.fileBacked.map { (a, $0) }
}

@Suite("strata convert (binary)")
struct ConvertCommandTests {
    @Test("convert between in-memory stores prints the verification table and exits 0")
    func memoryToMemory() throws {
        let directory = try TemporaryDirectory()
        let model = try writeDemoModel(in: directory)
        let result = try runStrata(["convert", "memory:", "memory:copy", "--model", model])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("ENTITY"))
        #expect(result.stdout.contains("Employee"))
        #expect(result.stdout.contains("Verified: every entity matches."))
    }

    @Test("a missing source file exits 64 naming it, and nothing is created")
    func missingSource() throws {
        let directory = try TemporaryDirectory()
        let result = try runStrata(["convert", directory.file("nope.sqlite").path, "memory:"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("no store at"))
        #expect(result.stderr.contains("nope.sqlite"))
        #expect(result.stdout.isEmpty)
    }

    @Test("an unknown driver exits 64 with one line")
    func unknownDriver() throws {
        let result = try runStrata(["convert", "memory:", "mongo:x", "--model", "m.json"])
        #expect(result.status == 64)
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    @Test("a model file that does not exist exits 64")
    func missingModel() throws {
        let result = try runStrata(["convert", "memory:", "memory:b", "--model", "/nonexistent/Model.xcdatamodeld"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("model file '/nonexistent/Model.xcdatamodeld' does not exist"))
    }

    @Test("A → B → A across processes equals A on every pair of file drivers", arguments: fileDriverPairs)
    func fileRoundTrip(_ pair: (KnownDriver, KnownDriver)) throws {
        let directory = try TemporaryDirectory()
        let a = fileLocation(pair.0, "a", in: directory)
        try seededMemoryStore(a)
        let b = fileLocation(pair.1, "b", in: directory)
        let back = fileLocation(pair.0, "back", in: directory)
        let first = try runStrata(["convert", a.description, b.description, "--quiet"])
        #expect(first.status == 0, "\(first.stderr)")
        let second = try runStrata(["convert", b.description, back.description])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("copied Employee"))
        #expect(try digests(a) == digests(back))
        let again = try runStrata(["convert", a.description, b.description])
        #expect(again.status == 64)
        #expect(again.stderr.contains("--overwrite"))
        let replaced = try runStrata(["convert", a.description, b.description, "--overwrite", "--quiet"])
        #expect(replaced.status == 0)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            $0.hasPrefix(".")
        }
        #expect(leftovers.isEmpty)
    }

    @Test("a corrupt store file exits 1 naming the file", arguments: KnownDriver.fileBacked)
    func corruptStore(_ scheme: KnownDriver) throws {
        let directory = try TemporaryDirectory()
        let location = fileLocation(scheme, "bad", in: directory)
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        if scheme == .lmdb {
            try FileManager.default.createDirectory(at: location.url!, withIntermediateDirectories: true)
            try Data(repeating: 0x5A, count: 8192).write(to: location.url!.appendingPathComponent("data.mdb"))
        } else {
            try Data(repeating: 0x5A, count: 8192).write(to: location.url!)
        }
        let result = try runStrata([
            "inspect", location.description, "--model", try writeConformanceModel(in: directory),
        ])
        #expect(result.status == 1)
        #expect(result.stderr.contains("bad"))
    }
}
