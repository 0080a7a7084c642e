import CLMDB
import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataLMDB

@Suite("LMDB format")
struct LMDBFormatTests {
    static let slots: [DatabaseLayout.Slot] = [
        .attribute(.integer16), .attribute(.integer32), .attribute(.integer64), .attribute(.decimal),
        .attribute(.double),
        .attribute(.string), .attribute(.boolean), .attribute(.date), .attribute(.binaryData), .attribute(.uuid),
        .attribute(.uri), .toOne(rel: 7), .links(rel: 8, inverse: nil, order: nil), .transient,
    ]
    static let values: [StoreValue] = [
        // valid literal
        .integer(-3), .integer(70_000), .integer(.min), .decimal(Decimal(string: "12345678901234567890.123456789")!),
        .double(-0.5), .string("e\u{301} ✓ \u{0}"), .bool(true), .date(Date(timeIntervalSinceReferenceDate: 12.25)),
        // valid literal
        .binary(Data([0, 1, 2, 255])), .uuid(UUID(uuidString: "01234567-89AB-CDEF-0123-456789ABCDEF")!),
        .uri(URL(string: "https://example.com/a?b=c")!), .reference(RowID(entity: 3, primaryKey: 42)), .unfetched,
        .null,  // valid literal
    ]

    @Test("a row round-trips through the binary encoding, to-many slots coming back unfetched")
    func roundTrip() throws {
        let bytes = try RowCodec.encode(version: 5, values: Self.values, layout: Self.slots)
        let row = try bytes.withUnsafeBytes {
            try RowCodec.decode($0, id: RowID(entity: 1, primaryKey: 9), layout: Self.slots)
        }
        #expect(row.version == 5)
        #expect(row.values == Self.values)
        #expect(bytes[0] == RowCodec.encodingVersion)
    }

    @Test("the decoder rejects every truncation and random corruption with an error, never a crash")
    func fuzz() throws {
        let valid = try RowCodec.encode(version: 5, values: Self.values, layout: Self.slots)
        var generator = SeededGenerator(seed: 0x5EED)
        var rejected = 0
        for length in 0..<valid.count {
            let cut = Array(valid.prefix(length))
            #expect(throws: FormatError.self) {
                try cut.withUnsafeBytes {
                    try RowCodec.decode($0, id: RowID(entity: 1, primaryKey: 1), layout: Self.slots)
                }
            }
        }
        for _ in 0..<5_000 {
            var bytes = valid
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                switch Int.random(in: 0..<3, using: &generator) {
                case 0:
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(
                        in: 0...255, using: &generator)
                case 1:
                    bytes.insert(
                        UInt8.random(in: 0...255, using: &generator),
                        at: Int.random(in: 0...bytes.count, using: &generator))
                default: if bytes.count > 1 { bytes.remove(at: Int.random(in: 0..<bytes.count, using: &generator)) }
                }
            }
            do {
                _ = try bytes.withUnsafeBytes {
                    try RowCodec.decode($0, id: RowID(entity: 1, primaryKey: 1), layout: Self.slots)
                }
            } catch is FormatError {
                rejected += 1
            }
        }
        #expect(rejected > 1_000)
        for _ in 0..<2_000 {
            let noise = (0..<Int.random(in: 0..<80, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            _ = try? noise.withUnsafeBytes { try MetadataCodec.decode($0) }
            _ = try? noise.withUnsafeBytes {
                try RowCodec.decode($0, id: RowID(entity: 1, primaryKey: 1), layout: Self.slots)
            }
        }
    }

    @Test("metadata values of every kind, Data included, persist faithfully across reopen")
    func metadata() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-format")
        let url = directory.file("meta.lmdb")
        let model = try ManagedObjectModel(entities: [EntityDescription("A", properties: [.attribute("x", .integer64)])]
        )
        let values: [String: MetadataValue] = [
            StoreMetadata.modelKey: .data(Data((0..<300).map { UInt8($0 % 256) })), "s": .string("ü"),
            "i": .integer(-7),
            "d": .double(2.5), "b": .bool(true), "t": .date(Date(timeIntervalSinceReferenceDate: 3)),
            "a": .array([.integer(1), .dictionary(["k": .data(Data([9]))])]),
        ]
        let driver = try LMDBDriverFactory().open(url: url, model: model, options: StoreOptions())
        var metadata = try driver.loadMetadata()
        metadata.values = values
        try driver.saveMetadata(metadata)
        try driver.close()
        let read = try #require(try LMDBDriverFactory().metadata(at: url, options: StoreOptions()))
        #expect(read.values == values)
        #expect(read.uuid == metadata.uuid)
        #expect(read.storeType == "LMDB")
        #expect(try LMDBDriverFactory().recoverModel(at: url, options: StoreOptions()) == nil)
    }

    @Test(
        "rows sit in the rows database of their root under big-endian (entity, key); to-one keys have reverse entries")
    func keyLayout() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-format")
        let (coordinator, store) = try DriverHarness.lmdb.openStack(in: directory)
        try ConformanceModel.seed(ManagedObjectContext(coordinator: coordinator))
        let driver = try #require(store.driver as? LMDBDriver)
        let employee = try #require(ConformanceModel.model.entity(named: "Employee"))
        let root = try #require(driver.layout.root(of: employee.entityNumber))
        #expect(root.databaseName == "rows.Employee")
        let keys = try driver.environment.read { txn in
            try txn.withCursor(driver.databases.rows[root.number]!) { cursor in  // the root has a database
                var keys: [[UInt8]] = []
                var entry = try cursor.move(MDB_FIRST)
                while let current = entry {
                    keys.append(Array(current.key))
                    entry = try cursor.move(MDB_NEXT)
                }
                return keys
            }
        }
        #expect(keys.count == 12)
        #expect(keys.allSatisfy { $0.count == 12 && Array($0.prefix(4)) == [0, 0, 0, UInt8(employee.entityNumber)] })
        #expect(keys == keys.sorted { $0.lexicographicallyPrecedes($1) })
        let slot = try #require(employee.index(ofProperty: "department"))
        // Employee is in the layout
        guard case .toOne(let rel) = driver.layout.slots[employee.entityNumber]![slot] else {
            Issue.record("department is not stored as a to-one key")
            return
        }
        let department = try #require(ConformanceModel.model.entity(named: "Department"))
        let departments = try driver.fetch(StoreFetch(entity: department)).rows
        let reverse = try driver.environment.read { txn in
            try departments.reduce(0) {
                $0 + (try driver.duplicates(driver.databases.refs, Keys.relationship(rel, $1.id), txn).count)
            }
        }
        #expect(reverse == 11)
    }
}
