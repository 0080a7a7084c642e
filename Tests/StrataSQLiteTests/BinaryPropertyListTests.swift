import Foundation
import StrataTesting
import Testing

@testable import StrataSQLite

/// Strata's own reader of binary property lists (Z_MODELCACHE's keyed archive, Z_METADATA): every
/// offset, length and reference is checked, so damage is a corrupt-store error, never a crash.
@Suite("Binary property lists")
struct BinaryPropertyListTests {
    /// A `bplist00` from raw objects (1-byte references, 2-byte offsets), the top object first.
    static func bplist(_ objects: [[UInt8]], top: UInt64 = 0, offsets: [Int]? = nil) -> Data {
        var bytes = Array("bplist00".utf8)
        var positions: [Int] = []
        for object in objects {
            positions.append(bytes.count)
            bytes += object
        }
        let table = bytes.count
        for position in offsets ?? positions { bytes += [UInt8(position >> 8), UInt8(position & 0xFF)] }
        bytes += [0, 0, 0, 0, 0, 0, 2, 1]
        func u64(_ value: UInt64) -> [UInt8] {
            (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) }
        }
        bytes += u64(UInt64(objects.count)) + u64(top) + u64(UInt64(table))
        return Data(bytes)
    }

    static func isCorrupt(_ body: () throws -> Any) -> Bool {
        do {
            _ = try body()
            return false
        } catch let error as SQLiteError {
            return error.code == .corrupt
        } catch {
            return false
        }
    }

    @Test("a list Foundation writes reads back with every type")
    func foundationWritten() throws {
        let date = Date(timeIntervalSinceReferenceDate: 123.5)
        let plist: [String: Any] = [
            "s": "hé", "i": 42, "n": -7, "big": Int64.max, "d": 2.5, "t": true, "f": false, "data": Data([1, 2, 3]),
            "date": date, "a": [1, "x"], "nested": ["k": ["v"]],
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        let value = try BinaryPropertyList.parse(data, what: "test")
        guard case .dictionary(let entries) = value else {
            Issue.record("not a dictionary: \(value)")
            return
        }
        #expect(entries["s"] == .string("hé"))
        #expect(entries["i"] == .integer(42))
        #expect(entries["n"] == .integer(-7))
        #expect(entries["big"] == .integer(Int64.max))
        #expect(entries["d"] == .real(2.5))
        #expect(entries["t"] == .bool(true) && entries["f"] == .bool(false))
        #expect(entries["data"] == .data(Data([1, 2, 3])))
        #expect(entries["date"] == .date(date))
        #expect(entries["a"] == .array([.integer(1), .string("x")]))
        #expect(entries["nested"] == .dictionary(["k": .array([.string("v")])]))
    }

    @Test("cycles, references and offsets outside the list, and truncation are corrupt")
    func damage() throws {
        // An array holding itself.
        #expect(Self.isCorrupt { try BinaryPropertyList.parse(Self.bplist([[0xA1, 0]]), what: "t") })
        // An array holding object 9 of 1.
        #expect(Self.isCorrupt { try BinaryPropertyList.parse(Self.bplist([[0xA1, 9]]), what: "t") })
        // An object offset inside the offset table.
        #expect(Self.isCorrupt { try BinaryPropertyList.parse(Self.bplist([[0x10, 1]], offsets: [200]), what: "t") })
        // A string longer than the data.
        #expect(Self.isCorrupt { try BinaryPropertyList.parse(Self.bplist([[0x5F, 0x10, 0xFF, 0x41]]), what: "t") })
        // A dictionary whose key is a number.
        #expect(Self.isCorrupt { try BinaryPropertyList.parse(Self.bplist([[0xD1, 1, 1], [0x10, 5]]), what: "t") })
        // Every prefix of a valid list.
        let valid = try PropertyListSerialization.data(
            fromPropertyList: ["k": [1, 2, "three"]], format: .binary, options: 0)
        for end in 0..<valid.count {
            #expect(
                Self.isCorrupt { try BinaryPropertyList.parse(valid.prefix(end), what: "t") }, "prefix of \(end) bytes")
        }
    }

    @Test("an object referenced from many places is read once: 60 levels of two references each stay linear")
    func sharedObjects() throws {
        // Object i (i < 60) is an array of two references to object i + 1; object 60 is a string.
        var objects: [[UInt8]] = (0..<60).map { [0xA2, UInt8($0 + 1), UInt8($0 + 1)] }
        objects.append([0x51, 0x41])
        let shared = try BinaryPropertyList.parse(Self.bplist(objects), what: "t")
        var depth = 0
        var current = shared
        while case .array(let items) = current {
            depth += 1
            current = items[1]
        }
        #expect(depth == 60 && current == .string("A"))
        // 70 levels is deeper than keyed archives nest: refused.
        var deep: [[UInt8]] = (0..<70).map { [0xA1, UInt8($0 + 1)] }
        deep.append([0x51, 0x41])
        #expect(Self.isCorrupt { try BinaryPropertyList.parse(Self.bplist(deep), what: "t") })
    }

    @Test(
        "a model cache damaged where Foundation's reader crashed reads without a crash",
        .enabled(if: Corpus.isAvailable, "STRATA_CORPUS is not set"))
    func damagedModelCache() throws {
        // The reliability suite's model-cache case 819855363/393: byte 0x247e of SampleModel2_V1's
        // archive set to 0x10 crashed PropertyListSerialization's bridging.
        let connection = try SQLiteConnection(path: try Corpus.copyOfStore("SampleModel2_V1.sqlite"))
        let compressed = try #require(try connection.scalar("SELECT Z_CONTENT FROM Z_MODELCACHE")?.blob)
        var archive = try RawDeflate.inflate(compressed)
        archive[0x247e] = 0x10
        let parsed = try KeyedArchive(data: archive)
        #expect(parsed.objects.count > 100)
        do {
            _ = try ModelCacheDecoder.decodeModel(fromArchive: parsed)
        } catch let error as SQLiteError {
            #expect(error.code == .corrupt)
        }
    }
}
