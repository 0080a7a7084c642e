import Foundation
import Strata
import StrataInMemory
import StrataTesting
import StrataTools
import Testing

/// How `strata export --output` and `strata convert` put their files in place: never removing or
/// truncating the destination before the new content is complete, keeping symbolic links and
/// modes, and leaving the old destination whole when they fail.
@Suite("strata output files")
struct OutputFileTests {
    static let marker = "DAMAGE-ME-MARKER"

    /// An LMDB store of the conformance seed plus a Track titled ``marker``, whose length prefix
    /// is then overwritten in the file so that reading that row fails.
    static func damagedLMDBStore(in directory: TemporaryDirectory) throws -> StoreLocation {
        let location = fileLocation(.lmdb, "damaged", in: directory)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try coordinator.addPersistentStore(type: try location.storeType(), at: location.url)
        let context = ManagedObjectContext(coordinator: coordinator)
        try ConformanceModel.seed(context)
        let track = try context.insertNewObject(forEntityName: "Track")
        track["title"] = marker
        try context.save()
        try coordinator.remove(store)
        let url = try #require(location.url)
        var bytes = [UInt8](try Data(contentsOf: url))
        let needle = Array(marker.utf8)
        var found = 0
        var index = 4
        while index + needle.count <= bytes.count {
            if bytes[index] == needle[0], Array(bytes[index..<(index + needle.count)]) == needle {
                for offset in (index - 4)..<index { bytes[offset] = 0xFF }  // the u32 length before the text
                found += 1
                index += needle.count
            } else {
                index += 1
            }
        }
        try #require(found > 0, "the marker is in the file")
        try Data(bytes).write(to: url)
        return location
    }

    static func mode(_ path: String) throws -> mode_t {
        var status = stat()
        try #require(stat(path, &status) == 0)
        return status.st_mode & 0o7777
    }

    static func isSymbolicLink(_ path: String) throws -> Bool {
        var status = stat()
        try #require(lstat(path, &status) == 0)
        return status.st_mode & S_IFMT == S_IFLNK
    }

    /// Hidden files a run left in `directory` (temporary files are hidden).
    static func leftovers(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(".") }
    }

    @Test("export --output through a symbolic link keeps the link, replaces the file it names and keeps its mode")
    func exportKeepsLinkAndMode() throws {
        let directory = try TemporaryDirectory(prefix: "export-link")
        let store = fileLocation(.sqlite, "source", in: directory)
        try seededMemoryStore(store)
        let real = directory.file("real.json")
        try Data("old".utf8).write(to: real)
        try #require(chmod(real.path, 0o640) == 0)
        let link = directory.file("link.json")
        try #require(symlink("real.json", link.path) == 0)
        let result = try runStrata(["export", store.description, "--output", link.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Self.isSymbolicLink(link.path))
        #expect(try String(contentsOf: real, encoding: .utf8).hasPrefix("{\"format\":\"strata-json\""))
        #expect(try Self.mode(real.path) == 0o640)
        #expect(try Self.leftovers(in: directory.url).isEmpty)
    }

    @Test("an export that fails part way leaves the old output file byte for byte, and no temporary file")
    func failedExportKeepsOldFile() throws {
        let directory = try TemporaryDirectory(prefix: "export-fail")
        let store = try Self.damagedLMDBStore(in: directory)
        let output = directory.file("out.json")
        try Data("the old export".utf8).write(to: output)
        #expect(throws: (any Error).self) { try InterchangeExporter.export(from: store, toFile: output.path) }
        let result = try runStrata(["export", store.description, "--output", output.path])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("malformed"), "\(result.stderr)")
        #expect(try String(contentsOf: output, encoding: .utf8) == "the old export")
        #expect(try Self.leftovers(in: directory.url).isEmpty)
    }

    @Test(
        "convert --overwrite through a symbolic link keeps the link and the destination's mode",
        arguments: KnownDriver.fileBacked)
    func convertKeepsLinkAndMode(_ scheme: KnownDriver) throws {
        let directory = try TemporaryDirectory(prefix: "convert-link")
        let source = try seededMemoryStore()
        let real = fileLocation(scheme, "real", in: directory)
        try StoreConverter.convert(from: source, to: real)
        let realURL = try #require(real.url)
        try #require(chmod(realURL.path, 0o640) == 0)
        let linkURL = directory.file("link.\(realURL.pathExtension)")
        try #require(symlink(realURL.lastPathComponent, linkURL.path) == 0)
        let link = StoreLocation(scheme: scheme, url: linkURL)
        let report = try StoreConverter.convert(from: source, to: link, options: ConversionOptions(overwrite: true))
        #expect(report.isVerified)
        #expect(try Self.isSymbolicLink(linkURL.path))
        #expect(try Self.mode(realURL.path) == 0o640)
        #expect(try digests(real) == digests(source))
        let hidden = try Self.leftovers(in: directory.url)
        #expect(hidden.isEmpty, "\(hidden)")
    }

    @Test(
        "a conversion that fails part way leaves the old destination byte for byte, and no temporary files",
        arguments: KnownDriver.fileBacked)
    func failedConversionKeepsOldDestination(_ scheme: KnownDriver) throws {
        let directory = try TemporaryDirectory(prefix: "convert-fail")
        let source = try Self.damagedLMDBStore(in: directory)
        let destination = fileLocation(scheme, "destination", in: directory)
        try seededMemoryStore(destination)
        let url = try #require(destination.url)
        let before = try Data(contentsOf: url)
        do {
            _ = try StoreConverter.convert(
                from: source, to: destination, options: ConversionOptions(overwrite: true, batchSize: 5))
            Issue.record("the conversion of a damaged store succeeded")
        } catch let error as ToolError {
            #expect(error.message.contains("malformed"), "\(error.message)")
        }
        #expect(try Data(contentsOf: url) == before)
        let hidden = try Self.leftovers(in: directory.url)
        #expect(hidden.isEmpty, "\(hidden)")
    }

    @Test(
        "a new store follows the process's umask on every file driver (no fixed 0644)",
        arguments: KnownDriver.fileBacked)
    func storesFollowUmask(_ kind: KnownDriver) throws {
        let directory = try TemporaryDirectory(prefix: "umask-\(kind.rawValue)")
        let source = fileLocation(.xml, "source", in: directory)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try coordinator.addPersistentStore(type: try source.storeType(), at: source.url)
        try ConformanceModel.seed(ManagedObjectContext(coordinator: coordinator))
        try coordinator.remove(store)
        let destination = fileLocation(kind, "created", in: directory)
        let result = try runStrata(["convert", source.description, destination.description], umask: "002")
        #expect(result.status == 0, "\(result.stderr)")
        let url = try #require(destination.url)
        var data = url
        if kind == .lmdb, (try? url.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true {
            data = url.appendingPathComponent("data.mdb")
        }
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: data.path)[.posixPermissions] as? Int)
        #expect(mode & 0o777 == 0o664, "\(kind): mode \(String(mode, radix: 8))")
    }

    @Test("a destination that is the source under another name is refused as the same store")
    func sameFileRefused() throws {
        let directory = try TemporaryDirectory(prefix: "convert-same")
        let source = fileLocation(.xml, "source", in: directory)
        try seededMemoryStore(source)
        let url = try #require(source.url)
        let before = try Data(contentsOf: url)
        let link = directory.file("alias.xml")
        try #require(symlink(url.lastPathComponent, link.path) == 0)
        do {
            _ = try StoreConverter.convert(
                from: source, to: StoreLocation(scheme: .xml, url: link), options: ConversionOptions(overwrite: true))
            Issue.record("converted a store onto itself")
        } catch let error as ToolError {
            #expect(error.kind == .usage)
            #expect(error.message.contains("same store"), "\(error.message)")
        }
        #expect(try Data(contentsOf: url) == before)
    }

    @Test("a SQLite destination with a non-empty write-ahead log is refused before anything is written")
    func liveJournalRefused() throws {
        let directory = try TemporaryDirectory(prefix: "convert-wal")
        let destination = fileLocation(.sqlite, "destination", in: directory)
        try seededMemoryStore(destination)
        let url = try #require(destination.url)
        let wal = URL(fileURLWithPath: url.path + "-wal")
        try Data(repeating: 7, count: 64).write(to: wal)
        let before = try Data(contentsOf: url)
        do {
            _ = try StoreConverter.convert(
                from: try seededMemoryStore(), to: destination, options: ConversionOptions(overwrite: true))
            Issue.record("replaced a store with a live journal")
        } catch let error as ToolError {
            #expect(error.kind == .usage)
            #expect(error.message.contains("-wal"), "\(error.message)")
        }
        #expect(try Data(contentsOf: url) == before)
        #expect(try Data(contentsOf: wal) == Data(repeating: 7, count: 64))
    }
}

@Suite("Interchange extreme values")
struct InterchangeExtremeValueTests {
    static let dates: [Double] = [
        1e300, -1e300, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 9.3e18, -9.3e18, 1e15 + 0.5,
        252_423_993_599.9999, 252_423_993_600, -63_145_526_400, -63_145_526_400.5, .infinity, -.infinity, .nan, 0,
    ]

    @Test("every date exports without trapping and imports back to the same value")
    func dates() throws {
        let attribute = try #require(
            ConformanceModel.model.entity(named: "Item")?.properties.first { $0.name == "date" }?.attribute)
        for seconds in Self.dates {
            let json = InterchangeValue.json(.date(Date(timeIntervalSinceReferenceDate: seconds)))
            let text = json.serialized(pretty: false)
            let reparsed = try JSONParser.parse(Data(text.utf8))
            guard case .success(.date(let back)) = InterchangeValue.storeValue(reparsed, for: attribute) else {
                Issue.record("\(seconds) exported as \(text) does not import")
                continue
            }
            let value = back.timeIntervalSinceReferenceDate
            #expect(
                value.bitPattern == seconds.bitPattern || (value.isNaN && seconds.isNaN),
                "\(seconds) → \(text) → \(value)")
        }
        #expect(
            InterchangeValue.json(.date(Date(timeIntervalSinceReferenceDate: 0))) == .string("2001-01-01T00:00:00.000Z")
        )
        #expect(InterchangeValue.json(.date(Date(timeIntervalSinceReferenceDate: 1e300))) == .number("1e+300"))
        #expect(
            ISO8601Timestamp.string(from: Date(timeIntervalSinceReferenceDate: 1e300)) == "9999-12-31T23:59:59.999Z")
        #expect(ISO8601Timestamp.exactString(from: Date(timeIntervalSinceReferenceDate: .nan)) == nil)
    }

    @Test("a store holding extreme dates exports and imports through the tool's files")
    func storeRoundTrip() throws {
        let directory = try TemporaryDirectory(prefix: "interchange-extreme")
        let source = memoryLocation("extreme")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try coordinator.addPersistentStore(type: try source.storeType(), at: source.url)
        let context = ManagedObjectContext(coordinator: coordinator)
        for seconds in Self.dates {
            let item = try context.insertNewObject(forEntityName: "Item")
            item["date"] = Date(timeIntervalSinceReferenceDate: seconds)
        }
        try context.save()
        try coordinator.remove(store)
        let file = directory.file("extreme.json")
        try InterchangeExporter.export(from: source, entities: ["Item"], toFile: file.path)
        let imported = memoryLocation("imported")
        let summary = try InterchangeImporter.importData(
            try Data(contentsOf: file), fileName: file.path, into: imported,
            modelPath: try writeConformanceModel(in: directory))
        #expect(summary.total == Self.dates.count)
    }
}
