import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

@testable import StrataTools

/// A store of the benchmark model (`Item`s, and `Parent`s with 25 `Child`ren each) written
/// straight through the driver, closed.
@discardableResult
private func benchStore(_ location: StoreLocation, items: Int, parents: Int) throws -> StoreLocation {
    let model = try BenchModel.make()
    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
    let store = try coordinator.addPersistentStore(type: try location.storeType(), at: location.url)
    let item = model.entity(named: "Item")!  // in the model
    let parent = model.entity(named: "Parent")!  // in the model
    let child = model.entity(named: "Child")!  // in the model
    let dataset = BenchDataset(rows: items, parents: 0)
    var batch = ChangeBatch()
    batch.inserts = dataset.rows.map { row in
        RowSnapshot(
            id: RowID(entity: item.entityNumber, primaryKey: row.id), version: 1,
            values: [
                .integer(row.id), .string(row.name), .string(row.email), .integer(Int64(row.age)),
                .double(row.score), .date(row.created),
            ])
    }
    for p in 1...Int64(parents) {
        let children = (1...Int64(25)).map { RowID(entity: child.entityNumber, primaryKey: (p - 1) * 25 + $0) }
        batch.inserts.append(
            RowSnapshot(
                id: RowID(entity: parent.entityNumber, primaryKey: p), version: 1,
                values: [.integer(p), .string("parent \(p)"), .references(children)]))
        for id in children {
            batch.inserts.append(
                RowSnapshot(
                    id: id, version: 1,
                    values: [
                        .integer(id.primaryKey), .string("child \(id.primaryKey)"),
                        .reference(RowID(entity: parent.entityNumber, primaryKey: p)),
                    ]))
        }
    }
    _ = try store.driver.apply(batch)
    try coordinator.remove(store)
    return location
}

private func sqlite(_ directory: TemporaryDirectory, _ name: String) -> StoreLocation {
    StoreLocation(scheme: .sqlite, url: directory.file(name))
}

/// The inode, size and modification time of every file in `directory` whose name holds `tag`.
private func identities(in directory: URL, tag: String) -> Set<[Int]> {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    var result = Set<[Int]>()
    for name in names where name.contains(tag) && !name.hasSuffix(".lock") {
        var info = stat()
        if stat(directory.appendingPathComponent(name).path, &info) == 0 {
            result.insert([
                Int(info.st_ino), Int(info.st_size), Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec),
            ])
        }
    }
    return result
}

@Suite("The tool at scale: convert, import, export and validate in batches")
struct ToolScaleTests {
    @Test("converting to XML in 31 batches writes the working file once before the end, not once per batch")
    func xmlWrittenOnce() throws {
        let directory = try TemporaryDirectory(prefix: "scale-xml")
        let source = try benchStore(sqlite(directory, "source.sqlite"), items: 6_000, parents: 60)
        let destination = StoreLocation(scheme: .xml, url: directory.file("copy.xml"))
        var seen = Set<[Int]>()
        var calls = 0
        let report = try StoreConverter.convert(
            from: source, to: destination,
            options: ConversionOptions(batchSize: 250) { _ in
                calls += 1
                seen.formUnion(identities(in: directory.url, tag: "converting"))
            })
        #expect(report.isVerified)
        #expect(calls >= 31)
        // The file the metadata write made, and no other, while the rows were copied.
        #expect(seen.count <= 1, "the working file was rewritten \(seen.count) times during the copy")
    }

    @Test(
        "a store of 7,560 rows converts SQLite → XML → LMDB → memory → SQLite with every copy verified, keeps its digests, validates clean and exports and imports again"
    )
    func largerRoundTrip() throws {
        let directory = try TemporaryDirectory(prefix: "scale-round-trip")
        let model = try BenchModel.make()
        let source = try benchStore(sqlite(directory, "source.sqlite"), items: 6_000, parents: 60)
        let chain = [
            StoreLocation(scheme: .xml, url: directory.file("a.xml")),
            StoreLocation(scheme: .lmdb, url: directory.file("b.lmdb")),
            memoryLocation("scale"),
            StoreLocation(scheme: .sqlite, url: directory.file("d.sqlite")),
        ]
        var from = source
        for to in chain {
            let report = try StoreConverter.convert(from: from, to: to, options: ConversionOptions(batchSize: 700))
            #expect(report.isVerified, "\(from) → \(to): \(report.table)")
            #expect(report.entities.map(\.destinationCount) == [1_500, 6_000, 60], "\(to)")
            from = to
        }
        #expect(try digests(source, model: model) == digests(from, model: model))
        #expect(try StoreValidator.validate(from, batchSize: 333).isEmpty)

        let exported = directory.file("export.json")
        let summary = try InterchangeExporter.export(from: from, toFile: exported.path)
        #expect(summary.total == 7_560)
        let imported = StoreLocation(scheme: .sqlite, url: directory.file("imported.sqlite"))
        let modelFile = directory.file("Bench.json")
        try model.encodedRepresentation().write(to: modelFile)
        let back = try InterchangeImporter.importFile(
            atPath: exported.path, into: imported, modelPath: modelFile.path)
        #expect(back.counts.map { $0.count } == [1_500, 6_000, 60])
        #expect(try StoreValidator.validate(imported).isEmpty)
    }

    @Test("validate finds the same problems whatever its batch size, and checks owners of many members")
    func validateBatches() throws {
        let model = try BenchModel.make()
        // In memory both sides of a relationship are stored, so they can disagree.
        let location = try benchStore(memoryLocation("broken"), items: 10, parents: 3)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .inMemory, at: location.url)
        let parent = model.entity(named: "Parent")!  // in the model
        let child = model.entity(named: "Child")!  // in the model
        // Parent 2 also lists child 1, whose parent is parent 1; child 30 (listed by parent 2)
        // points at parent 9, which does not exist.
        let owner = try #require(try store.driver.rows(for: [RowID(entity: parent.entityNumber, primaryKey: 2)]).first)
        var members =
            try store.driver.relatedRows(
                RelatedRowsRequest(entity: parent, slot: 2, sources: [owner.id]))[owner.id] ?? []
        #expect(members.count == 25)
        members.append(RowID(entity: child.entityNumber, primaryKey: 1))
        var values = owner.values
        values[2] = .references(members)
        var batch = ChangeBatch()
        batch.updates = [RowUpdate(id: owner.id, expectedVersion: owner.version, values: values, changedSlots: [2])]
        let stray = try #require(try store.driver.rows(for: [RowID(entity: child.entityNumber, primaryKey: 30)]).first)
        var strayValues = stray.values
        strayValues[2] = .reference(RowID(entity: parent.entityNumber, primaryKey: 9))
        batch.updates.append(
            RowUpdate(id: stray.id, expectedVersion: stray.version, values: strayValues, changedSlots: [2]))
        _ = try store.driver.apply(batch)
        try coordinator.remove(store)

        let reference = try StoreValidator.validate(location).map(\.description)
        for size in [1, 2, 7] {
            #expect(try StoreValidator.validate(location, batchSize: size).map(\.description) == reference, "\(size)")
        }
        #expect(reference.contains { $0.contains("/Child/p30 parent: points at") && $0.contains("/Parent/p9,") })
        #expect(reference.contains { $0.contains("/Parent/p2 children: points at") && $0.contains("/Child/p1,") })
        #expect(reference.contains { $0.contains("/Parent/p2 children: points at") && $0.contains("/Child/p30,") })
        #expect(reference.count == 3, "\(reference)")
    }
}

@Suite("Content digests")
struct ContentDigestTests {
    @Test("MurmurHash3 x64-128 with seed 0 gives the reference implementation's hashes")
    func murmurVectors() {
        func hex(_ text: [UInt8]) -> String {
            let (h1, h2) = text.withUnsafeBytes { Murmur3.hash($0, seed: (0, 0)) }
            // The reference writes h1 then h2, each little-endian.
            return
                (withUnsafeBytes(of: h1.littleEndian) { Array($0) } + withUnsafeBytes(of: h2.littleEndian) { Array($0) })
                .map { String(format: "%02x", $0) }.joined()
        }
        #expect(hex([]) == "00000000000000000000000000000000")
        #expect(hex(Array("hello".utf8)) == "029bbd41b3a7d8cb191dae486a901e5b")
        #expect(hex(Array("The quick brown fox jumps over the lazy dog".utf8)) == "6c1b07bc7bbc4be347939ac4a93c437a")
        #expect(hex((0..<40).map { UInt8($0) }) == "64808c41d854a0c3ad124c9730ca01a0")
    }

    @Test("a digest changes with any value, key, target or order, and not with how rows are batched")
    func sensitivity() throws {
        let model = try BenchModel.make()
        let parent = model.entity(named: "Parent")!  // in the model
        let child = model.entity(named: "Child")!  // in the model
        func row(_ key: Int64, _ name: String, _ children: [Int64]) -> RowSnapshot {
            RowSnapshot(
                id: RowID(entity: parent.entityNumber, primaryKey: key), version: 1,
                values: [
                    .integer(key), .string(name),
                    .references(children.map { RowID(entity: child.entityNumber, primaryKey: $0) }),
                ])
        }
        func digest(_ batches: [[RowSnapshot]]) -> String {
            var digest = ContentDigest(entity: parent, model: model)
            for batch in batches { digest.add(batch) }
            return digest.hexString
        }
        let rows = [row(1, "a", [1, 2]), row(2, "b", []), row(3, "c", [3])]
        let reference = digest([rows])
        #expect(reference.count == 32)
        #expect(digest([[rows[0]], [rows[1], rows[2]]]) == reference)
        #expect(digest([[row(1, "a", [2, 1]), rows[1], rows[2]]]) == reference, "an unordered to-many is sorted")
        for changed in [
            [row(1, "a", [1, 2]), row(2, "B", []), rows[2]], [row(1, "a", [1, 2]), row(4, "b", []), rows[2]],
            [row(1, "a", [1, 3]), rows[1], rows[2]], [rows[1], rows[0], rows[2]], [rows[0], rows[1]],
        ] {
            #expect(digest([changed]) != reference)
        }
    }
}

@Suite("strata convert when the source fails")
struct ConvertSourceFailureTests {
    @Test("a source with pages that do not read fails with an error naming the source, and leaves no copy")
    func damagedSource() throws {
        let directory = try TemporaryDirectory(prefix: "convert-damaged-source")
        let source = try benchStore(sqlite(directory, "source.sqlite"), items: 6_000, parents: 10)
        let path = source.url!.path
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        // Four pages in the middle of the Item table's data, overwritten with bytes no page holds.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seek(toOffset: UInt64(size / 2 / 4_096 * 4_096))
        try handle.write(contentsOf: Data(repeating: 0xFF, count: 4 * 4_096))
        try handle.close()
        let destination = StoreLocation(scheme: .xml, url: directory.file("copy.xml"))
        #expect {
            try StoreConverter.convert(from: source, to: destination, options: ConversionOptions(batchSize: 500))
        } throws: { error in
            (error as? ToolError).map { "\($0)".contains("source.sqlite") } ?? false
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            $0.contains("copy")
        }
        #expect(left.isEmpty, "\(left)")
    }
}

@Suite("The conversion's source reader thread")
struct ConversionSourceReaderTests {
    private struct Injected: Error, CustomStringConvertible {
        var description: String { "injected read failure" }
    }

    /// An in-memory store of `items` items behind a recording driver.
    private func source(items: Int) throws -> (RecordingDriver, ManagedObjectModel) {
        let model = try BenchModel.make()
        let driver = try InMemoryDriverFactory().makeDriver(
            StoreOpenRequest(url: nil, model: model, configuration: nil, options: StoreOptions()))
        let item = model.entity(named: "Item")!  // in the model
        var batch = ChangeBatch()
        batch.inserts = (1...Int64(items)).map {
            RowSnapshot(
                id: RowID(entity: item.entityNumber, primaryKey: $0), version: 1,
                values: [.integer($0), .string("n\($0)"), .string("e"), .integer(20), .double(1), .date(Date())])
        }
        _ = try driver.apply(batch)
        return (RecordingDriver(wrapping: driver), model)
    }

    @Test("a read that fails on the third batch hands over two batches, then the error naming the source")
    func failureHandedOver() throws {
        let (driver, model) = try source(items: 1_000)
        // After the second batch's read, the third one fails.
        driver.afterNext(.rows) { driver.afterNext(.rows) { driver.failNext(.rows, with: Injected()) } }
        let reader = ConversionSourceReader(
            driver: driver, entities: [model.entity(named: "Item")!], model: model, batchSize: 100,
            source: memoryLocation("failing"))
        reader.start()
        var rows = 0
        var failure: (any Error)?
        reading: while true {
            switch reader.next() {
            case .rows(_, let batch): rows += batch.count
            case .entityDone, .finished: break reading
            case .failed(let error):
                failure = error
                break reading
            }
        }
        reader.wait()
        #expect(rows == 200)
        let error = try #require(failure as? ToolError)
        #expect("\(error)".contains("injected read failure") && "\(error)".contains("memory:failing"), "\(error)")
    }

    @Test("stopping the reader after one batch ends its thread having read at most four")
    func stopEarly() throws {
        let (driver, model) = try source(items: 5_000)
        let reader = ConversionSourceReader(
            driver: driver, entities: [model.entity(named: "Item")!], model: model, batchSize: 100,
            source: memoryLocation("stopped"))
        reader.start()
        guard case .rows(_, let first) = reader.next() else {
            Issue.record("the first item is not a batch")
            return
        }
        #expect(first.count == 100)
        reader.stop()
        let read = driver.calls(.rows).count
        #expect(read >= 1 && read <= 4, "\(read) batches read")
    }
}

/// Every top-level member of `document` with the `objects` array rebuilt from the reader's events,
/// or the syntax error's text: what ``JSONParser/parse(_:)`` gives for the same bytes.
private func streamed(_ bytes: [UInt8], chunk: Int) -> String {
    var offset = 0
    var reader = InterchangeStreamReader {
        guard offset < bytes.count else { return nil }
        let end = min(offset + chunk, bytes.count)
        defer { offset = end }
        return Array(bytes[offset..<end])
    }
    var members: [(String, JSONValue)] = []
    var objects: [JSONValue] = []
    var objectsAt: Int?
    var whole: JSONValue?
    do {
        try reader.read { event in
            switch event {
            case .member(let key, let value): members.append((key, value))
            case .objectsStart: objectsAt = members.count
            case .object(let index, let value):
                #expect(index == objects.count)
                objects.append(value)
            case .document(let value): whole = value
            }
        }
    } catch {
        return "error: \(error)"
    }
    if let whole { return "value: \(whole.serialized(pretty: false))" }
    if let objectsAt { members.insert(("objects", .array(objects)), at: objectsAt) }
    return "value: \(JSONValue.object(members).serialized(pretty: false))"
}

private func parsed(_ bytes: [UInt8]) -> String {
    do {
        return "value: \(try JSONParser.parse(Data(bytes)).serialized(pretty: false))"
    } catch {
        return "error: \(error)"
    }
}

@Suite("The interchange stream reader")
struct InterchangeStreamReaderTests {
    static let valid = [
        "{\"format\": \"strata-json\", \"version\": 1, \"objects\": [\n  {\"entity\": \"A\", \"id\": \"a1\", \"attributes\": {\"s\": \"x\\\"y\\\\z\\u00e9\\ud83d\\ude00 ünï\", \"n\": -1.5e+3, \"t\": true, \"f\": false, \"z\": null, \"l\": [1, [2, {\"k\": []}]]}},\n  {\"entity\": \"B\", \"id\": \"b]\"}\n], \"extra\": {\"objects\": [9]}}",
        "\u{FEFF}{\"objects\":[]}",
        "{}",
        "  {\"objects\": 5, \"objects\": [1, 2]}  ",
        "[1, 2, {\"a\": \"b\"}]",
        "\"just a string\"",
        "{\"objects\": [1, 2], \"objects\": [3]}",
    ]
    static let invalid = [
        "{\"objects\": [{\"a\": 1} x]}", "{\"objects\": [1,]}", "{\"a\": tru}", "{\"a\": truex}", "{\"a\": 1x}",
        "{\"a\": 01}", "{\"a\": -}", "{\"a\": \"\u{01}\"}", "{\"a\": \"\\q\"}", "{\"a\" 1}", "{1: 2}", "{\"a\": 1} x",
        "[1] x", "", "\u{FEFF}", "{\"objects\": [\n\n   {\"entity\": @}]}", "{\"a\": \"\\ud800x\"}",
    ]

    @Test("gives JSONParser's value or error (message, line and column) for every document, in chunks of any size")
    func matchesParser() {
        for text in Self.valid + Self.invalid {
            let bytes = Array(text.utf8)
            let expected = parsed(bytes)
            for chunk in [1, 2, 3, 7, 64, 1 << 20] {
                #expect(streamed(bytes, chunk: chunk) == expected, "\(text.debugDescription) in chunks of \(chunk)")
            }
        }
        #expect(Self.invalid.allSatisfy { parsed(Array($0.utf8)).hasPrefix("error") })
    }

    @Test("agrees with JSONParser on every prefix of a document, each a truncated file")
    func everyPrefix() {
        let bytes = Array(Self.valid[0].utf8)
        for length in 0..<bytes.count {
            let prefix = Array(bytes[..<length])
            #expect(streamed(prefix, chunk: 5) == parsed(prefix), "prefix of \(length) bytes")
        }
    }

    @Test("an import file with a syntax error past the first megabyte is refused naming the line and column")
    func lateSyntaxError() throws {
        let directory = try TemporaryDirectory(prefix: "stream-late-error")
        var text = "{\"format\": \"strata-json\", \"version\": 1, \"objects\": [\n"
        for index in 0..<14_000 {
            text +=
                "{\"entity\": \"Department\", \"id\": \"d\(index)\", \"attributes\": {\"name\": \"Department \(index)\"}},\n"
        }
        text += "  {\"entity\": \"Department\", \"id\": \"bad\", \"attributes\": {\"name\": nope}}\n]}\n"
        #expect(text.utf8.count > 1 << 20)
        let file = directory.file("late.json")
        try Data(text.utf8).write(to: file)
        let model = directory.file("Demo.json")
        try Demo.makeModel().encodedRepresentation().write(to: model)
        let store = StoreLocation(scheme: .sqlite, url: directory.file("never.sqlite"))
        #expect {
            try InterchangeImporter.importFile(atPath: file.path, into: store, modelPath: model.path)
        } throws: { error in
            "\(error)".contains("late.json is not valid JSON: line 14002, column 64: expected 'null'")
        }
        #expect(!FileManager.default.fileExists(atPath: store.url!.path), "nothing is written")
        #expect(throws: ToolError.self) {
            try InterchangeImporter.importFile(atPath: directory.url.path, into: store, modelPath: model.path)
        }
        #expect(throws: ToolError.self) {
            try InterchangeImporter.importFile(
                atPath: directory.file("missing.json").path, into: store, modelPath: model.path)
        }
    }
}
