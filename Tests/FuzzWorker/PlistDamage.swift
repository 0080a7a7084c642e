import Foundation
import StrataTesting

/// A property list as a tree, with keyed-archive references (`CF$UID`) kept, so that damage can
/// change one value, reference or level of nesting and write the list back out (as XML, which
/// every reader of these lists accepts).
indirect enum PlistValue {
    case bool(Bool)
    case integer(Int64)
    case real(Double)
    case string(String)
    case data([UInt8])
    case date(Double)
    case uid(Int64)
    case array([PlistValue])
    case dictionary([(String, PlistValue)])

    /// Reads a property list with Foundation; `nil` when it is not one.
    init?(bytes: [UInt8]) {
        guard let any = try? PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: nil) else {
            return nil  // not a property list: the caller damages the bytes instead
        }
        guard let value = Self.convert(any, depth: 0) else { return nil }
        self = value
    }

    private static func convert(_ any: Any, depth: Int) -> PlistValue? {
        guard depth < 200 else { return nil }
        if String(describing: type(of: any)).contains("UID") {
            for child in Mirror(reflecting: any).children where child.label == "value" {
                if let value = child.value as? UInt32 { return .uid(Int64(value)) }
            }
            return nil
        }
        switch any {
        case let value as String: return .string(value)
        case let value as Data: return .data(Array(value))
        case let value as Date: return .date(value.timeIntervalSinceReferenceDate)
        case let values as [Any]:
            var converted: [PlistValue] = []
            for value in values {
                guard let element = convert(value, depth: depth + 1) else { return nil }
                converted.append(element)
            }
            return .array(converted)
        case let entries as [String: Any]:
            var converted: [(String, PlistValue)] = []
            for key in entries.keys.sorted() {
                guard let element = convert(entries[key] as Any, depth: depth + 1) else { return nil }
                converted.append((key, element))
            }
            return .dictionary(converted)
        case let value as Bool where type(of: any) == Bool.self: return .bool(value)
        case let value as Int: return .integer(Int64(value))
        case let value as Double: return .real(value)
        case let value as NSNumber:
            let kind = String(cString: value.objCType)
            return kind == "d" || kind == "f" ? .real(value.doubleValue) : .integer(value.int64Value)
        default: return nil
        }
    }

    /// The list as an XML property list.
    var xml: [UInt8] {
        var text = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        text +=
            #"<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">"#
        text += "\n<plist version=\"1.0\">\n"
        write(&text)
        text += "\n</plist>\n"
        return Array(text.utf8)
    }

    /// Writes the value as plist XML.
    func write(_ text: inout String) {
        switch self {
        case .bool(let value): text += value ? "<true/>" : "<false/>"
        case .integer(let value): text += "<integer>\(value)</integer>"
        case .real(let value): text += "<real>\(value)</real>"
        case .string(let value): text += "<string>\(Self.escape(value))</string>"
        case .data(let value): text += "<data>\(Data(value).base64EncodedString())</data>"
        case .date(let value):
            let formatter = ISO8601DateFormatter()
            text += "<date>\(formatter.string(from: Date(timeIntervalSinceReferenceDate: value)))</date>"
        case .uid(let value): text += "<dict><key>CF$UID</key><integer>\(value)</integer></dict>"
        case .array(let values):
            text += "<array>"
            for value in values { value.write(&text) }
            text += "</array>"
        case .dictionary(let entries):
            text += "<dict>"
            for (key, value) in entries {
                text += "<key>\(Self.escape(key))</key>"
                value.write(&text)
            }
            text += "</dict>"
        }
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    /// Number of nodes, for picking one.
    var count: Int {
        switch self {
        case .array(let values): 1 + values.reduce(0) { $0 + $1.count }
        case .dictionary(let entries): 1 + entries.reduce(0) { $0 + $1.1.count }
        default: 1
        }
    }

    /// The list with node `target` (in pre-order) replaced by `new`, or removed when `new` is
    /// `nil` (removing the root leaves an empty dictionary).
    func replacing(_ target: Int, with new: PlistValue?) -> PlistValue {
        var counter = 0
        func visit(_ node: PlistValue) -> PlistValue? {
            let mine = counter
            counter += 1
            if mine == target { return new }
            switch node {
            case .array(let values): return .array(values.compactMap { visit($0) })
            case .dictionary(let entries):
                return .dictionary(entries.compactMap { key, value in visit(value).map { (key, $0) } })
            default: return node
            }
        }
        return visit(self) ?? .dictionary([])
    }
}

/// Structured damage to property lists: one node replaced by a value of another type, an
/// interesting integer, a reference out of range or to itself, deep nesting, or removed.
enum PlistDamage {
    static func structured(_ bytes: [UInt8], _ random: inout SeededGenerator) -> (bytes: [UInt8], what: String)? {
        guard let tree = PlistValue(bytes: bytes) else { return nil }
        let total = tree.count
        let target = Int.random(in: 0..<total, using: &random)
        let replacement = Self.replacement(&random, objects: total)
        return (
            tree.replacing(target, with: replacement.value).xml,
            "plist node \(target) of \(total) → \(replacement.what)"
        )
    }

    /// A value to put in place of a node; `nil` removes the node.
    static func replacement(_ random: inout SeededGenerator, objects: Int) -> (value: PlistValue?, what: String) {
        switch Int.random(in: 0..<12, using: &random) {
        case 0, 1:
            let value = ByteDamage.interestingInteger(using: &random)
            return (.integer(value), "integer \(value)")
        case 2, 3:
            let value: Int64 = [-1, 0, 1, Int64(objects), Int64(objects) + 1, Int64(UInt32.max), Int64.max][
                Int.random(in: 0..<7, using: &random)]
            return (.uid(value), "reference \(value)")
        case 4:
            return (
                .string(
                    ["", "$null", "NSManagedObjectModel", "\u{0}", String(repeating: "x", count: 10_000)][
                        Int.random(in: 0..<5, using: &random)]), "a string"
            )
        case 5: return (.data(Array(repeating: 0xFF, count: Int.random(in: 0...64, using: &random))), "data")
        case 6: return (.real([Double.infinity, -1e308, 1e-308, 0.5][Int.random(in: 0..<4, using: &random)]), "a real")
        case 7: return (.bool(Bool.random(using: &random)), "a Boolean")
        case 8:
            let depth = [10, 63, 64, 65, 200, 2_000][Int.random(in: 0..<6, using: &random)]
            var value = PlistValue.integer(1)
            for level in 0..<depth { value = level % 2 == 0 ? .array([value]) : .dictionary([("k", value)]) }
            return (value, "nesting \(depth) deep")
        case 9: return (.array([]), "an empty array")
        case 10: return (.dictionary([]), "an empty dictionary")
        default: return (nil, "removed")
        }
    }
}
