import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataXML

@Suite("XML store format")
struct XMLFormatTests {
    @Test("a saved store is written in Core Data's XML layout")
    func layout() throws {
        let directory = try TemporaryDirectory(prefix: "xml-layout")
        let text = try XMLTestSupport.text(try XMLTestSupport.seededStore(in: directory))
        #expect(
            text.hasPrefix(
                "<?xml version=\"1.0\" standalone=\"yes\"?>\n<!DOCTYPE database SYSTEM \"file:///System/Library/DTDs/CoreData.dtd\">"
            ))
        #expect(text.contains("<version>134481920</version>"))
        #expect(text.contains(#"<object type="ITEM" id="z"#))
        #expect(text.contains(#"<object type="SPORTSCAR" id="z"#))
        #expect(text.contains(#"<attribute name="int16" type="int16">"#))
        #expect(text.contains(#"<attribute name="topspeed" type="double">"#))
        #expect(text.contains(#"<relationship name="tags" type="0/0" destination="TAG" idrefs="z"#))
        #expect(text.contains(#"<relationship name="mentor" type="0/1" destination="EMPLOYEE""#))
        #expect(text.contains("<key>NSStoreModelVersionHashes</key>"))
        #expect(text.contains("<key>StrataModelVersionHash</key>"))
        #expect(!text.contains("scratch"), "transient attributes are not written")
        // Nil attributes are left out: 3 of the 10 seeded items have no int32.
        #expect(text.components(separatedBy: #"name="int32""#).count - 1 == 7)
        let ids = text.matches(of: /<object type="[A-Z]+" id="z(\d+)">/).map { Int($0.1)! }  // \d+ parses
        #expect(Set(ids).count == ids.count, "object ids are unique across entities")
        // \d+ parses
        let next = try #require(text.firstMatch(of: /<nextObjectID>(\d+)<\/nextObjectID>/).map { Int($0.1)! })
        #expect(next > ids.max()!)  // the seed has objects
        // Both sides of a relationship are written: every Chapter names its playlist.
        #expect(
            text.components(separatedBy: #"<relationship name="playlist" type="0/1" destination="PLAYLIST" idrefs="z"#)
                .count - 1 == 3)
    }

    @Test("every attribute value round-trips through the file bit for bit")
    func exactValues() throws {
        let directory = try TemporaryDirectory(prefix: "xml-values")
        let url = directory.file("values.xml")
        let model = ConformanceModel.model
        let item = try #require(model.entity(named: "Item"))
        let samples: [[String: StoreValue]] = [
            [
                "date": .date(Date(timeIntervalSinceReferenceDate: 0.1)), "double": .double(.leastNonzeroMagnitude),
                "float": .double(Double(Float.pi)),
                "decimal": .decimal(Decimal(string: "-79228162514264337593543950335")!),  // valid
                "string": .string("nul \u{0} bell \u{7} cr\r\nlf ]]> \u{FFFF} end"), "int64": .integer(Int64.min),
            ],
            [
                "date": .date(Date(timeIntervalSinceReferenceDate: -1e-7)), "double": .double(.pi),
                // valid
                "string": .string("  leading and trailing spaces  "), "decimal": .decimal(Decimal(string: "0.0001")!),
                "binary": .binary(Data((0..<4096).map { _ in UInt8.random(in: 0...255) })),
                "uri": .uri(URL(string: "file:///tmp/a%20b.txt")!), "uuid": .uuid(UUID()),  // valid literal
            ],
            [
                "date": .date(Date(timeIntervalSinceReferenceDate: 1e15 + 0.5)), "double": .double(-.infinity),
                "string": .string("   "), "words": .binary(Data("[\"a\"]".utf8)), "bool": .bool(false),
            ],
            ["date": .date(Date(timeIntervalSinceReferenceDate: 445_103_622.25)), "string": .string("\t")],
            ["date": .date(Date(timeIntervalSinceReferenceDate: .infinity))],
            ["date": .date(Date(timeIntervalSinceReferenceDate: -1e300))],
        ]
        var written: [RowID: [StoreValue]] = [:]
        do {
            let driver = try XMLTestSupport.driver(at: url)
            let keys = try driver.allocatePrimaryKeys(forEntity: item.entityNumber, count: samples.count)
            var batch = ChangeBatch()
            for (offset, sample) in samples.enumerated() {
                var values = item.properties.map { property -> StoreValue in
                    property.relationship?.isToMany == true ? .references([]) : .null
                }
                for (key, value) in sample { values[try #require(item.index(ofProperty: key))] = value }
                let id = RowID(entity: item.entityNumber, primaryKey: keys.lowerBound + Int64(offset))
                batch.inserts.append(RowSnapshot(id: id, version: 1, values: values))
                written[id] = values
            }
            _ = try driver.apply(batch)
            try driver.close()
        }
        let text = try XMLTestSupport.text(url)
        #expect(text.contains(#"<attribute name="date" type="date">0.1</attribute>"#))
        #expect(text.contains(#"<attribute name="date" type="date">-0.0000001</attribute>"#))
        #expect(text.contains(#"<attribute name="string" type="string" encoding="base64">"#))
        #expect(text.contains(#"<attribute name="words" type="transformable">WyJhIl0=</attribute>"#))
        let reopened = try XMLTestSupport.driver(at: url, options: StoreOptions(isReadOnly: true))
        let rows = try XMLTestSupport.allRows(reopened, model: model)
        #expect(rows.count == samples.count)
        for (id, values) in written {
            let row = try #require(rows[id])
            #expect(row.values == values, "row \(id)")
        }
    }

    @Test("metadata keeps every value type, Apple's keys beside Strata's")
    func metadataValues() throws {
        let directory = try TemporaryDirectory(prefix: "xml-metadata")
        let url = directory.file("meta.xml")
        let values: [String: MetadataValue] = [
            "NSPersistenceFrameworkVersion": .integer(1044), "flag": .bool(true), "one": .integer(1),
            "ratio": .double(0.1),
            "huge": .double(.infinity), "blob": .data(Data([0, 1, 2, 255])), "empty": .data(Data()),
            "when": .date(Date(timeIntervalSinceReferenceDate: 700_000_000.25)),
            "whole": .date(Date(timeIntervalSinceReferenceDate: -31_000_000)),
            "NSStoreModelVersionIdentifiers": .array([.string(""), .string("v2 <&>")]),
            "nested": .dictionary(["a": .array([.dictionary([:]), .bool(false)]), "b": .string("ü\r\n")]),
        ]
        let hashes = ["Item": Data(repeating: 7, count: 32)]
        let uuid = UUID().uuidString
        do {
            let driver = try XMLTestSupport.driver(at: url)
            try driver.saveMetadata(
                StoreMetadata(uuid: uuid, storeType: "XML", entityVersionHashes: hashes, values: values))
            try driver.close()
        }
        let text = try XMLTestSupport.text(url)
        #expect(text.contains("<UUID>\(uuid)</UUID>"))
        #expect(text.contains("<key>NSPersistenceFrameworkVersion</key>"))
        let factory = XMLDriverFactory()
        let read = try #require(try factory.metadata(at: url, options: StoreOptions()))
        #expect(read.uuid == uuid)
        #expect(read.entityVersionHashes == hashes)
        #expect(read.values == values)
    }

    @Test("primary keys come from one counter for the whole file and are not handed out again after reopen")
    func oneKeyCounter() throws {
        let directory = try TemporaryDirectory(prefix: "xml-keys")
        let url = directory.file("keys.xml")
        let model = ConformanceModel.model
        let tag = try #require(model.entity(named: "Tag"))
        let track = try #require(model.entity(named: "Track"))
        var handedOut: [ClosedRange<Int64>] = []
        do {
            let driver = try XMLTestSupport.driver(at: url)
            handedOut.append(try driver.allocatePrimaryKeys(forEntity: tag.entityNumber, count: 3))
            handedOut.append(try driver.allocatePrimaryKeys(forEntity: track.entityNumber, count: 2))
            try driver.close()  // nothing saved: the file already records a reservation past the keys
        }
        let driver = try XMLTestSupport.driver(at: url)
        handedOut.append(try driver.allocatePrimaryKeys(forEntity: track.entityNumber, count: 1))
        #expect(Array(handedOut.prefix(2)) == [1...3, 4...5])
        #expect(handedOut[2].lowerBound > 5, "keys after reopening start past every key handed out before")
        #expect(handedOut[2].lowerBound <= 5 + XMLDriver.keyReservation + 1, "reopening skips at most one reservation")
        try driver.close()
    }

    @Test("a save refused as stale leaves file and store unchanged")
    func failedSaveChangesNothing() throws {
        let directory = try TemporaryDirectory(prefix: "xml-failed-save")
        let url = try XMLTestSupport.seededStore(in: directory)
        let before = try Data(contentsOf: url)
        let model = ConformanceModel.model
        let driver = try XMLTestSupport.driver(at: url)
        let rowsBefore = try XMLTestSupport.allRows(driver, model: model)
        let tag = try #require(model.entity(named: "Tag"))
        let row = try #require(rowsBefore.values.first { $0.id.entity == tag.entityNumber })
        var values = row.values
        values[0] = .string("stale")
        var batch = ChangeBatch()
        batch.updates = [RowUpdate(id: row.id, expectedVersion: row.version + 3, values: values, changedSlots: [0])]
        #expect(storeErrorCode { _ = try driver.apply(batch) } == .conflict)
        #expect(try Data(contentsOf: url) == before)
        #expect(try XMLTestSupport.allRows(driver, model: model) == rowsBefore)
        try driver.close()
        #expect(try Data(contentsOf: url) == before, "close after a failed save writes nothing new")
    }

    @Test("rows of two hierarchies with the same key keep their keys through the file")
    func sharedKeysAcrossHierarchies() throws {
        let directory = try TemporaryDirectory(prefix: "xml-shared-keys")
        let url = try XMLTestSupport.seededStore(in: directory)
        let model = ConformanceModel.model
        let driver = try XMLTestSupport.driver(at: url)
        let rowsBefore = try XMLTestSupport.allRows(driver, model: model)
        let tag = try #require(model.entity(named: "Tag"))
        // in the model
        let track = try #require(rowsBefore.values.first { $0.id.entity == model.entity(named: "Track")!.entityNumber })
        var batch = ChangeBatch()
        let clash = RowID(entity: tag.entityNumber, primaryKey: track.id.primaryKey)
        batch.inserts = [RowSnapshot(id: clash, version: 1, values: [.string("clash"), .references([])])]
        _ = try driver.apply(batch)
        try driver.close()
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(text.contains("pk=\"\(track.id.primaryKey)\""))
        let reopened = try XMLTestSupport.driver(at: url)
        let rowsAfter = try XMLTestSupport.allRows(reopened, model: model)
        #expect(rowsAfter[clash]?.values.first == .string("clash"))
        #expect(rowsAfter[track.id] == rowsBefore[track.id])
        #expect(rowsAfter.count == rowsBefore.count + 1)
        try reopened.close()
    }

    @Test("a store opened read-only refuses saves and never writes")
    func readOnly() throws {
        let directory = try TemporaryDirectory(prefix: "xml-readonly")
        let url = try XMLTestSupport.seededStore(in: directory)
        let before = try Data(contentsOf: url)
        let driver = try XMLTestSupport.driver(at: url, options: StoreOptions(isReadOnly: true))
        #expect(storeErrorCode { _ = try driver.apply(ChangeBatch()) } == .readOnly)
        #expect(storeErrorCode { try driver.saveMetadata(StoreMetadata(storeType: "XML")) } == .readOnly)
        try driver.close()
        #expect(try Data(contentsOf: url) == before)
        let missing = directory.file("missing.xml")
        #expect(
            storeErrorCode { _ = try XMLTestSupport.driver(at: missing, options: StoreOptions(isReadOnly: true)) }
                == .notFound)
    }

    @Test("a file in Apple's layout opens with names matched ignoring case")
    func appleLayout() throws {
        let directory = try TemporaryDirectory(prefix: "xml-apple")
        let url = try XMLTestSupport.write(
            XMLTestSupport.appleStyle(
                """
                    <object type="VEHICLEPICTURE" id="z103">
                        <attribute name="picturename" type="string">picture_1</attribute>
                        <attribute name="sequence" type="int32">0</attribute>
                        <attribute name="taken" type="date">445103622.25000000000000000000</attribute>
                        <attribute name="thumbnail" type="binary">AAEC
                    /w==</attribute>
                        <relationship name="picturesforvehicle" type="1/1" destination="VEHICLE" idrefs="z102"></relationship>
                    </object>
                    <object type="VEHICLE" id="z102">
                        <attribute name="year" type="int32">2006</attribute>
                        <attribute name="price" type="decimal">19999.99</attribute>
                        <attribute name="sold" type="bool">1</attribute>
                        <relationship name="vehiclepictures" type="0/0" destination="VEHICLEPICTURE" idrefs="z104 z103"></relationship>
                    </object>
                    <object type="VEHICLEPICTURE" id="z104">
                        <relationship name="picturesforvehicle" type="1/1" destination="VEHICLE" idrefs="z102"></relationship>
                    </object>
                """), in: directory)
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Vehicle",
                properties: [
                    .attribute("year", .integer32), .attribute("price", .decimal), .attribute("sold", .boolean),
                    .toMany("vehiclePictures", "VehiclePicture", inverse: "picturesForVehicle"),
                ]),
            EntityDescription(
                "VehiclePicture",
                properties: [
                    .attribute("pictureName", .string), .attribute("sequence", .integer32), .attribute("taken", .date),
                    .attribute("thumbnail", .binaryData),
                    .toOne("picturesForVehicle", "Vehicle", inverse: "vehiclePictures"),
                ]),
        ])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .xml, at: url, options: StoreOptions(isReadOnly: true))
        #expect(store.identifier == "343C8D7F-A000-42C4-8463-43FA1E5EF3FB")
        let context = ManagedObjectContext(coordinator: coordinator)
        let vehicle = try #require(try context.fetch(FetchRequest(entityName: "Vehicle")).first)
        #expect(vehicle.objectID.primaryKey == 102)
        #expect(vehicle["year"] as? Int == 2006)
        #expect(vehicle["price"] as? Decimal == Decimal(string: "19999.99"))
        #expect(vehicle["sold"] as? Bool == true)
        let pictures = vehicle.objects(forKey: "vehiclePictures")
        #expect(Set(pictures.map(\.objectID.primaryKey)) == [103, 104])
        let first = try #require(pictures.first { $0.objectID.primaryKey == 103 })
        #expect(first["pictureName"] as? String == "picture_1")
        #expect((first["taken"] as? Date)?.timeIntervalSinceReferenceDate == 445_103_622.25)
        #expect(first["thumbnail"] as? Data == Data([0, 1, 2, 255]))
        #expect(first.object(forKey: "picturesForVehicle")?.objectID == vehicle.objectID)
    }
}

@Suite("XML number writing")
struct XMLNumberWritingTests {
    @Test("doubles with at most two decimals are written as Double.description spells them; others are left to it")
    func hundredths() {
        var generator = SeededGenerator(seed: 0x100)
        var values: [Double] = [
            0.01, 0.1, 0.5, 1, 57.05, 57.5, 99.99, 100, -0.25, -3, 700_000_000, 999_999_999_999.99, 123_456.78,
        ]
        for _ in 0..<20_000 {
            let cents = Int64.random(in: -100_000_000_000_000...100_000_000_000_000, using: &generator)
            values.append(Double(cents) / 100)
            values.append(Double.random(in: -1e6...1e6, using: &generator))
        }
        var written = 0
        for value in values {
            var writer = XMLByteWriter()
            if writer.hundredths(value) {
                written += 1
                #expect(String(decoding: writer.buffer, as: UTF8.self) == value.description, "\(value)")
            } else {
                #expect(writer.buffer.isEmpty)
            }
        }
        #expect(written > 20_000)
        for edge in [0, -0.0, 0.001, 1e12, .nan, .infinity, 0.1 + 0.2] {
            var writer = XMLByteWriter()
            let handled = writer.hundredths(edge)
            #expect(!handled, "\(edge)")
        }
    }
}

@Suite("XML parallel encoding")
struct XMLParallelEncodingTests {
    @Test("a store of many chunks encodes to the same bytes on several cores as on one")
    func sameBytes() throws {
        let model = ConformanceModel.model
        let employee = try #require(model.entity(named: "Employee"))
        let tag = try #require(model.entity(named: "Tag"))
        var state = AtomicStoreEngine.State(metadata: StoreMetadata(uuid: "parallel", storeType: "XML"))
        let count = 3 * XMLStoreEncoder.chunkRows + 17
        for key in 1...Int64(count) {
            var values = employee.defaultValues
            values[employee.index(ofProperty: "name")!] = .string("név \(key) <&>")  // in the model
            // in the model
            values[employee.index(ofProperty: "salary")!] = key % 5 == 0 ? .null : .double(Double(key) / 3)
            values[employee.index(ofProperty: "age")!] = .integer(key % 90)  // in the model
            state.rows[employee.entityNumber, default: [:]][key] = RowSnapshot(
                id: RowID(entity: employee.entityNumber, primaryKey: key), version: 1, values: values)
        }
        // A second hierarchy sharing keys with the first: those rows get remapped object numbers.
        for key in Int64(1)...40 {
            var values = tag.defaultValues
            values[tag.index(ofProperty: "name")!] = .string("tag \(key)")  // in the model
            state.rows[tag.entityNumber, default: [:]][key] = RowSnapshot(
                id: RowID(entity: tag.entityNumber, primaryKey: key), version: 1, values: values)
        }
        let encoder = XMLStoreEncoder(model: model)
        var one = XMLByteWriter()
        try encoder.write(state, nextObjectID: 1, store: "test", to: &one, cores: 1)
        var several = XMLByteWriter()
        try encoder.write(state, nextObjectID: 1, store: "test", to: &several, cores: 4)
        #expect(one.count > 100_000)
        #expect(one.buffer == several.buffer)
        // Through a file, as a save writes: chunks go straight to the descriptor.
        let directory = try TemporaryDirectory(prefix: "xml-parallel")
        let path = directory.file("objects.xml").path
        let descriptor = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o644)
        try #require(descriptor >= 0)
        var file = XMLByteWriter(descriptor: descriptor, path: path)
        try encoder.write(state, nextObjectID: 1, store: "test", to: &file, cores: 4)
        try file.flush()
        close(descriptor)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(one.buffer))
        let text = String(decoding: several.buffer, as: UTF8.self)
        #expect(text.components(separatedBy: "<object ").count - 1 == count + 40)
        #expect(text.contains("pk=\"40\""))
    }
}

@Suite("XML text writing")
struct XMLTextWritingTests {
    @Test("checking and escaping in one pass gives what the check and the escaper give separately")
    func representableText() {
        var generator = SeededGenerator(seed: 0x7E7)
        let pieces = [
            "a", "&", "<", ">", "\r", "\n", "\t", "\u{1}", "\u{1F}", "é", "\u{FFFE}", "\u{FFFF}", "\u{FFFD}", "ﬀ", "\"",
            " ", "😀",
        ]
        for round in 0..<5_000 {
            let text = (0..<Int.random(in: 0...8, using: &generator)).map { _ in
                pieces.randomElement(using: &generator)!
            }.joined()  // non-empty
            var combined = XMLByteWriter()
            combined.raw("x")
            let written = combined.representableText(text, after: ">")
            var separate = XMLByteWriter()
            separate.raw("x")
            let representable = XMLByteWriter.isRepresentable(text)
            if representable {
                separate.raw(">")
                separate.text(text)
            }
            #expect(written == representable, "round \(round): \(Array(text.unicodeScalars))")
            #expect(combined.buffer == separate.buffer, "round \(round)")
        }
    }
}
