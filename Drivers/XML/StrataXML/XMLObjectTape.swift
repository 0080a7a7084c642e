import CLibXML2
import Foundation

/// Objects as the scanner read them, packed: the bytes of every name, type and text in one
/// buffer and the ids of every `idrefs` in another, so reading an object allocates nothing per
/// string. ``object(_:)`` turns one back into an ``XMLRawObject`` where it is used, which may be
/// another thread (``XMLObjectPipeline``).
///
/// Thread safety: a value; `Sendable`.
struct XMLObjectTape: Sendable {
    struct Object: Sendable {
        var type: Range<Int>
        var id: Int64
        var primaryKey: Int64?
        var line: Int
        var properties: Range<Int>
    }

    struct Property: Sendable {
        var isRelationship: Bool
        var name: Range<Int>
        var type: Range<Int>?
        var text: Range<Int>
        var isBase64Encoded: Bool
        var destination: Range<Int>?
        var idrefs: Range<Int>
        var line: Int
    }

    private(set) var bytes: [UInt8] = []
    private(set) var numbers: [Int64] = []
    private(set) var objects: [Object] = []
    private(set) var properties: [Property] = []

    /// Complete objects on the tape.
    var count: Int { objects.count }

    /// Appends the NUL-terminated `text` and returns where its bytes are.
    mutating func append(_ text: UnsafePointer<xmlChar>) -> Range<Int> {
        let start = bytes.count
        bytes.append(contentsOf: UnsafeBufferPointer(start: text, count: strlen(text)))
        return start..<bytes.count
    }

    /// Appends ids and returns where they are.
    mutating func append(numbers new: [Int64]) -> Range<Int> {
        let start = numbers.count
        numbers.append(contentsOf: new)
        return start..<numbers.count
    }

    /// Starts an object's properties; returns where they begin.
    var propertyMark: Int { properties.count }

    mutating func append(_ property: Property) { properties.append(property) }

    /// Finishes an object whose properties were appended since `mark`.
    mutating func appendObject(type: Range<Int>, id: Int64, primaryKey: Int64?, line: Int, since mark: Int) {
        objects.append(
            Object(type: type, id: id, primaryKey: primaryKey, line: line, properties: mark..<properties.count))
    }

    /// Empties the tape, keeping its memory.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        numbers.removeAll(keepingCapacity: true)
        objects.removeAll(keepingCapacity: true)
        properties.removeAll(keepingCapacity: true)
    }

    /// The text of `range`.
    func string(_ range: Range<Int>) -> String {
        bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }

    /// Whether the bytes of `range` are all XML whitespace.
    func isBlank(_ range: Range<Int>) -> Bool {
        bytes[range].allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
    }

    /// The object at `index`, as the loader reads it.
    func object(_ index: Int) -> XMLRawObject {
        let object = objects[index]
        var raw = XMLRawObject(
            type: string(object.type), id: object.id, primaryKey: object.primaryKey, line: object.line, properties: [])
        raw.properties.reserveCapacity(object.properties.count)
        for property in properties[object.properties] {
            raw.properties.append(
                XMLRawProperty(
                    isRelationship: property.isRelationship, name: string(property.name),
                    type: property.type.map(string),
                    text: string(property.text), isBase64Encoded: property.isBase64Encoded,
                    destination: property.destination.map(string), idrefs: Array(numbers[property.idrefs]),
                    line: property.line))
        }
        return raw
    }
}
