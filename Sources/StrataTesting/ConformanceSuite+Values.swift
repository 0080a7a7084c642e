import Foundation
import Strata

extension ConformanceSuite {
    /// Attribute values that stress every type: extremes, unicode, empty and large values.
    static let extremeValues: [[String: StoreValue]] = [
        [
            "int16": .integer(Int64(Int16.max)), "int32": .integer(Int64(Int32.min)), "int64": .integer(Int64.max),
            "decimal": .decimal(Decimal(string: "12345678901234567890.123456789")!),  // a valid literal
            "double": .double(Double.greatestFiniteMagnitude), "float": .double(Double(Float.leastNonzeroMagnitude)),
            "string": .string("e\u{301}👩‍👩‍👧 \u{0}nul and \"quotes\" <tags> & 'apostrophes'\n\ttabs"),
            "bool": .bool(true), "date": .date(Date(timeIntervalSinceReferenceDate: -978_307_200.123456)),
            "binary": .binary(Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })),
            "uuid": .uuid(UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!),  // a valid literal
            "uri": .uri(URL(string: "https://example.com/a%20b?q=ü#frag")!),  // a valid literal
        ],
        [
            "int16": .integer(Int64(Int16.min)), "int32": .integer(Int64(Int32.max)), "int64": .integer(Int64.min),
            "decimal": .decimal(Decimal(string: "-0.000000000000000000000000001")!),  // a valid literal
            "double": .double(-0.0), "float": .double(Double(Float.greatestFiniteMagnitude)),
            "string": .string(""), "bool": .bool(false),
            "date": .date(Date(timeIntervalSinceReferenceDate: 4_102_444_800.5)),
            // valid
            "binary": .binary(Data()), "uuid": .uuid(UUID(uuidString: "00000000-0000-0000-0000-000000000000")!),
            "uri": .uri(URL(string: "x-coredata://ABC/Item/p1")!),  // a valid literal
        ],
        [
            "double": .double(Double.infinity), "float": .double(-Double(Float.infinity)),
            "string": .string(String(repeating: "long ✓ ", count: 20_000)),
            "date": .date(Date(timeIntervalSinceReferenceDate: 0.000001)),
            "int64": .integer(0), "decimal": .decimal(0),
        ],
        [:],
    ]

    static var valueCases: [ConformanceCase] {
        [
            ConformanceCase("every attribute type round-trips exactly, including nil and extreme values") { harness in
                let fixture = try Fixture(harness, seeded: false)
                let context = fixture.context()
                var ids: [ManagedObjectID] = []
                for values in extremeValues {
                    let item = try context.insertNewObject(forEntityName: "Item")
                    for (key, value) in values { try item.setStoreValue(value, forKey: key) }
                    try context.obtainPermanentIDs(for: [item])
                    ids.append(item.objectID)
                }
                try context.save()
                let (_, reopened) = try fixture.reopen()
                let items = try reopened.fetch(FetchRequest(entityName: "Item"))
                try requireEqual(items.count, extremeValues.count, "items")
                for (index, values) in extremeValues.enumerated() {
                    guard let item = items.first(where: { $0.objectID.primaryKey == ids[index].primaryKey }) else {
                        throw ConformanceFailure(message: "item \(index) missing", file: #fileID, line: #line)
                    }
                    for attribute in item.entity.attributes where !attribute.isTransient && attribute.name != "words" {
                        let expected = values[attribute.name] ?? .null
                        let actual = try item.storeValue(forKey: attribute.name)
                        try require(
                            sameStoredValue(actual, expected),
                            "item \(index) \(attribute.name): expected \(expected.displayText), got \(actual.displayText)"
                        )
                    }
                }
            },
            ConformanceCase("transformable values go through their transformer and transient ones are not stored") {
                harness in
                let fixture = try Fixture(harness, seeded: false)
                let context = fixture.context()
                let item = try context.insertNewObject(forEntityName: "Item")
                item["words"] = ["ein", "zwei", "drei"]
                item["scratch"] = "not stored"
                try context.save()
                let (_, reopened) = try fixture.reopen()
                let again = try reopened.fetch(FetchRequest(entityName: "Item"))[0]
                try requireEqual(again.value(forKey: "words") as? [String], ["ein", "zwei", "drei"], "words")
                try require(again.value(forKey: "scratch") == nil, "transient value was stored")
            },
            ConformanceCase("default values apply on insert and are stored") { harness in
                let fixture = try Fixture(harness, seeded: false)
                let context = fixture.context()
                let car = try context.insertNewObject(forEntityName: "Car")
                try requireEqual(car.value(forKey: "wheels") as? Int, 4, "default wheels before save")
                try context.save()
                let again = try fetch(fixture.context(), "Car")[0]
                try requireEqual(again.value(forKey: "wheels") as? Int, 4, "default wheels after save")
            },
        ]
    }

    /// Equality as stored: NaN-free doubles compare exactly, dates to the microsecond (drivers
    /// that store seconds as doubles keep about that much).
    static func sameStoredValue(_ a: StoreValue, _ b: StoreValue) -> Bool {
        switch (a, b) {
        case (.date(let x), .date(let y)):
            return abs(x.timeIntervalSinceReferenceDate - y.timeIntervalSinceReferenceDate) < 1e-6
        case (.double(let x), .double(let y)): return x == y && x.sign == y.sign
        default: return a == b
        }
    }
}
