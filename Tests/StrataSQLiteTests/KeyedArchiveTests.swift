import Foundation
import Testing

@testable import StrataSQLite

/// Builds a tiny keyed archive as a binary plist, with UIDs written as real `CF$UID` values.
func makeArchive(objects: [Any], top: [String: Any]) throws -> Data {
    // PropertyListSerialization cannot write UIDs; an XML plist with CF$UID dictionaries reads
    // back as UIDs in the same way binary archives do.
    let plist: [String: Any] = ["$archiver": "NSKeyedArchiver", "$version": 100000, "$objects": objects, "$top": top]
    return try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
}

func uid(_ n: Int) -> [String: Any] { ["CF$UID": n] }

@Suite("KeyedArchive")
struct KeyedArchiveTests {
    @Test("objects, class names, strings, arrays and dictionaries are navigable")
    func navigation() throws {
        let data = try makeArchive(
            objects: [
                "$null",
                ["$class": uid(2), "name": uid(3), "items": uid(4), "count": 3, "flag": true, "nothing": uid(0)],
                ["$classname": "Thing", "$classes": ["Thing", "NSObject"]],
                "hello",
                ["$class": uid(5), "NS.objects": [uid(3), uid(6)]],
                ["$classname": "NSArray", "$classes": ["NSArray", "NSObject"]],
                ["$class": uid(7), "NS.string": "mutable"],
                ["$classname": "NSMutableString", "$classes": ["NSMutableString", "NSString", "NSObject"]],
            ],
            top: ["root": uid(1)])
        let archive = try KeyedArchive(data: data)
        let root = try archive.topObject()
        #expect(root.className == "Thing")
        #expect(root.isKind(of: "NSObject"))
        #expect(root["name"]?.string == "hello")
        #expect(root["count"]?.integer == 3)
        #expect(root["flag"]?.bool == true)
        #expect(root["nothing"] == nil)
        #expect(root["missing"] == nil)
        #expect(root["items"]?.elements?.compactMap(\.string) == ["hello", "mutable"])
    }

    @Test("garbage bytes throw a corrupt error")
    func garbage() {
        #expect(throws: SQLiteError.self) { try KeyedArchive(data: Data("not a plist at all {{{".utf8)) }
        #expect(throws: SQLiteError.self) {
            try KeyedArchive(data: Data([0x62, 0x70, 0x6C, 0x69, 0x73, 0x74, 0x30, 0x30, 1, 2]))
        }
        #expect(throws: SQLiteError.self) { try KeyedArchive(data: Data()) }
    }

    @Test("a plist that is not a keyed archive is rejected")
    func notAnArchive() throws {
        let plain = try PropertyListSerialization.data(fromPropertyList: ["a": 1], format: .binary, options: 0)
        #expect(throws: SQLiteError.self) { try KeyedArchive(data: plain) }
    }

    @Test("a reference outside the object table is rejected at parse time")
    func danglingReference() throws {
        let data = try makeArchive(objects: ["$null", ["value": uid(42)]], top: ["root": uid(1)])
        #expect(throws: SQLiteError.self) { try KeyedArchive(data: data) }
    }

    @Test("decoding a model from an archive whose root is not a model fails with a typed error")
    func notAModel() throws {
        let data = try makeArchive(
            objects: ["$null", ["$class": uid(2)], ["$classname": "NSDate", "$classes": ["NSDate", "NSObject"]]],
            top: ["root": uid(1)])
        #expect(throws: SQLiteError.self) { try ModelCacheDecoder.decodeModel(fromArchive: KeyedArchive(data: data)) }
        #expect(throws: SQLiteError.self) { try ModelCacheDecoder.decodeModel(fromModelCache: rawDeflate(data)) }
        #expect(throws: SQLiteError.self) { try ModelCacheDecoder.decodeModel(fromModelCache: Data("junk".utf8)) }
    }
}
