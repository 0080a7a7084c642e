import Foundation
import Strata
import StrataTesting
import Testing

/// `object["key"] = value` with a value of a type that converts to a store value takes the typed
/// subscript; it must store exactly what the `Any?` path stores and refuse what it refuses.
@Suite("Typed key access")
struct TypedKeyAccessTests {
    static let date = Date(timeIntervalSinceReferenceDate: 12_345.5)
    static let uuid = UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))
    static let url = URL(string: "https://example.com/a")!

    /// Sets each key both ways on two new items and returns their stored values.
    static func bothWays(
        _ stack: TestStack, _ key: String, typed: (ManagedObject) -> Void, untyped: Any?
    ) throws -> (typed: StoreValue, untyped: StoreValue) {
        let a = try stack.context.insertNewObject(forEntityName: "Item")
        let b = try stack.context.insertNewObject(forEntityName: "Item")
        typed(a)
        try b.setConvertedValue(untyped, forKey: key)
        return (try a.storeValue(forKey: key), try b.storeValue(forKey: key))
    }

    @Test("typed writes store what Any writes store, conversions included")
    func sameAsAny() throws {
        let stack = try TestStack()
        let cases: [(String, (ManagedObject) -> Void, Any?)] = [
            ("int16", { $0["int16"] = Int16(-7) }, Int16(-7)),
            ("int16", { $0["int16"] = 300 }, 300),
            ("int32", { $0["int32"] = Int32.max }, Int32.max),
            ("int64", { $0["int64"] = Int64.min }, Int64.min),
            ("int64", { $0["int64"] = true }, true),
            ("double", { $0["double"] = 2.5 }, 2.5),
            ("double", { $0["double"] = 3 }, 3),
            ("float", { $0["float"] = 0.1 }, 0.1),
            ("float", { $0["float"] = Float(0.1) }, Float(0.1)),
            ("decimal", { $0["decimal"] = Decimal(string: "1.25")! }, Decimal(string: "1.25")!),
            ("decimal", { $0["decimal"] = 4 }, 4),
            ("string", { $0["string"] = "héllo" }, "héllo"),
            ("string", { $0["string"] = String?.none }, nil),
            ("bool", { $0["bool"] = true }, true),
            ("bool", { $0["bool"] = 1 }, 1),
            ("date", { $0["date"] = Self.date }, Self.date),
            ("date", { $0["date"] = 12_345.5 }, 12_345.5),
            ("binary", { $0["binary"] = Data([1, 2]) }, Data([1, 2])),
            ("uuid", { $0["uuid"] = Self.uuid }, Self.uuid),
            ("uuid", { $0["uuid"] = Self.uuid.uuidString }, Self.uuid.uuidString),
            ("uri", { $0["uri"] = Self.url }, Self.url),
        ]
        for (key, typed, untyped) in cases {
            let (a, b) = try Self.bothWays(stack, key, typed: typed, untyped: untyped)
            #expect(a == b, "\(key): typed \(a), Any \(b)")
            #expect(a != .null || untyped == nil, "\(key) was stored")
        }
    }

    @Test("typed reads give the stored value in the type asked for, nil for nil and for what does not fit")
    func typedReads() throws {
        let stack = try TestStack()
        let item = try stack.context.insertNewObject(forEntityName: "Item")
        item["int16"] = 42
        item["string"] = "text"
        item["float"] = Float(1.5)
        let int: Int? = item["int16"]
        let int64: Int64? = item["int16"]
        let text: String? = item["string"]
        let missing: Date? = item["date"]
        let wrongType: Date? = item["string"]
        let float: Float? = item["float"]
        #expect(int == 42 && int64 == 42)
        #expect(text == "text")
        #expect(missing == nil && wrongType == nil)
        #expect(float == 1.5)
        #expect(item["int16"] as? Int == 42, "the Any subscript is unchanged")
    }

    @Test("a transformable attribute written with a typed value takes its transformer's path")
    func transformable() throws {
        let stack = try TestStack()
        let item = try stack.context.insertNewObject(forEntityName: "Item")
        item["words"] = ["a", "b"]
        let raw = try item.storeValue(forKey: "words")
        let other = try stack.context.insertNewObject(forEntityName: "Item")
        #expect(throws: StoreError.self) { try other.setConvertedValue("not a list", forKey: "words") }
        guard case .binary = raw else {
            Issue.record("words stored as \(raw)")
            return
        }
        #expect(item["words"] as? [String] == ["a", "b"])
    }

    @Test("typed writes refuse what does not fit, naming the entity and attribute")
    func refusals() throws {
        let stack = try TestStack()
        let item = try stack.context.insertNewObject(forEntityName: "Item")
        for (key, attempt) in [
            ("int16", { try item.setConvertedValue(70_000, forKey: "int16") }),
            ("bool", { try item.setConvertedValue(2, forKey: "bool") }),
            ("string", { try item.setConvertedValue(5, forKey: "string") }),
            ("nope", { try item.setConvertedValue(1, forKey: "nope") }),
        ] as [(String, () throws -> Void)] {
            do {
                try attempt()
                Issue.record("\(key) accepted a value that does not fit")
            } catch let error as StoreError {
                #expect(error.code == .invalidRequest)
                #expect(error.message.contains("Item") && error.message.contains(key), "\(error.message)")
            }
        }
        #expect(try item.storeValue(forKey: "int16") == .null, "a refused write changes nothing")
    }
}
