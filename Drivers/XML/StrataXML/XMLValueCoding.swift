import Foundation
import Strata

/// How attribute values are written in `<attribute type="…">` elements and read back, exactly.
///
/// | Strata type | `type` | text |
/// |---|---|---|
/// | Integer 16/32/64 | `int16` `int32` `int64` | decimal |
/// | Decimal | `decimal` | `Decimal.description` (exact) |
/// | Double, Float | `double` `float` | shortest round-trip form (`0.1`, `1e-300`, `inf`, `-inf`, `nan`) |
/// | String | `string` | the text, escaped; base64 UTF-8 with `encoding="base64"` when XML cannot carry it |
/// | Boolean | `bool` | `1` / `0` |
/// | Date | `date` | seconds since 2001-01-01 in positional decimal, shortest round-trip digits (`inf`, `-inf`, `nan`) |
/// | Binary | `binary` | base64 |
/// | UUID | `uuid` | `E621E1F8-C36C-495A-93FC-0C247A3E6E5F` |
/// | URI | `uri` | the absolute string |
/// | Transformable | `transformable` | base64 of the transformed bytes |
enum XMLValueCoding {
    /// The `type` attribute written for an attribute of `type`.
    static func typeName(_ type: AttributeType) -> String {
        switch type {
        case .integer16: "int16"
        case .integer32: "int32"
        case .integer64: "int64"
        case .decimal: "decimal"
        case .double: "double"
        case .float: "float"
        case .string: "string"
        case .boolean: "bool"
        case .date: "date"
        case .binaryData: "binary"
        case .uuid: "uuid"
        case .uri: "uri"
        case .transformable: "transformable"
        case .objectID: "objectid"
        case .undefined: "undefined"
        case .composite: "composite"  // never written: a composite's elements are attributes of their own
        }
    }

    /// The attribute type a `type` attribute names (used when inferring a model), or `nil`.
    static func attributeType(named name: String) -> AttributeType? {
        switch name.lowercased() {
        case "int16": .integer16
        case "int32": .integer32
        case "int64": .integer64
        case "decimal": .decimal
        case "double": .double
        case "float": .float
        case "string": .string
        case "bool", "boolean": .boolean
        case "date": .date
        case "binary": .binaryData
        case "uuid": .uuid
        case "uri", "url": .uri
        // Without its transformer the bytes are all we can give back.
        case "transformable": .binaryData
        default: nil
        }
    }

    /// Parses `text` as a value of `type`; `nil` when it does not parse (the caller reports where).
    static func parse(_ text: String, as type: AttributeType, base64Encoded: Bool) -> StoreValue? {
        switch type {
        case .string:
            if base64Encoded {
                return decodeBase64(text).flatMap { String(data: $0, encoding: .utf8) }.map(StoreValue.string)
            }
            return .string(text)
        case .integer16, .integer32, .integer64:
            guard let value = Int64(trimmed(text)), type.integerRange?.contains(value) ?? true else { return nil }
            return .integer(value)
        case .double, .float:
            // Plain numbers parse directly; special spellings (inf, NaN, padded text) take the slow path.
            if let value = Double(text) { return .double(value) }
            return XMLPropertyList.parseReal(text).map(StoreValue.double)
        case .decimal:
            return parseDecimal(trimmed(text)).map(StoreValue.decimal)
        case .boolean:
            switch trimmed(text) {
            case "1", "YES", "true", "TRUE", "yes": return .bool(true)
            case "0", "NO", "false", "FALSE", "no": return .bool(false)
            default: return nil
            }
        case .date:
            // `nan`, `inf` and `-inf` included: the writer spells non-finite dates so.
            if let seconds = Double(trimmed(text)) { return .date(Date(timeIntervalSinceReferenceDate: seconds)) }
            return XMLPropertyList.parseReal(text).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        case .binaryData, .transformable:
            return decodeBase64(text).map(StoreValue.binary)
        case .uuid:
            return UUID(uuidString: trimmed(text)).map(StoreValue.uuid)
        case .uri:
            return URL(string: trimmed(text)).map(StoreValue.uri)
        case .objectID, .undefined, .composite:
            return nil
        }
    }

    /// Writes the text of `value` (already known non-nil and an attribute value).
    ///
    /// - Returns: `false` when `value` is not an attribute value (a reference or `.unfetched`).
    static func write(_ value: StoreValue, to writer: inout XMLByteWriter) -> Bool {
        switch value {
        case .integer(let number): writer.integer(number)
        case .double(let number):
            if !writer.hundredths(number) { writer.ascii(number.isNaN ? "nan" : number.description) }
        case .decimal(let number): writer.ascii(number.description)
        case .string(let text):
            if XMLByteWriter.isRepresentable(text) { writer.text(text) } else { writer.base64(Data(text.utf8)) }
        case .bool(let flag): writer.raw(flag ? "1" : "0")
        case .date(let date):
            let seconds = date.timeIntervalSinceReferenceDate
            if !writer.hundredths(seconds) { writer.ascii(plainDecimal(seconds)) }
        case .binary(let data): writer.base64(data)
        case .uuid(let uuid): writer.ascii(uuid.uuidString)
        case .uri(let url): writer.text(url.absoluteString)
        case .null, .reference, .references, .unfetched: return false
        }
        return true
    }

    /// The shortest decimal that reads back as `value`, in positional notation (no exponent):
    /// `445103622.25`, `0.000001`.
    static func plainDecimal(_ value: Double) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
        let shortest = value.description
        // The common case (dates of this era): already positional; checked on bytes, not Characters.
        guard shortest.utf8.contains(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) else {
            return shortest
        }
        guard let e = shortest.firstIndex(where: { $0 == "e" || $0 == "E" }) else { return shortest }
        let exponent = Int(shortest[shortest.index(after: e)...]) ?? 0
        var mantissa = String(shortest[..<e])
        let negative = mantissa.hasPrefix("-")
        if negative { mantissa.removeFirst() }
        let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        let whole = String(parts[0])
        let fraction = parts.count > 1 ? String(parts[1]) : ""
        var digits = whole + fraction
        var point = whole.count + exponent  // position of the decimal point within digits
        if point <= 0 {
            digits = String(repeating: "0", count: -point + 1) + digits
            point = 1
        } else if point > digits.count {
            digits += String(repeating: "0", count: point - digits.count)
        }
        var result = String(digits.prefix(point))
        var tail = String(digits.dropFirst(point))
        while tail.hasSuffix("0") { tail.removeLast() }
        if !tail.isEmpty { result += "." + tail }
        return (negative ? "-" : "") + result
    }

    /// Decodes base64 ignoring ASCII whitespace (Apple's files wrap lines); `nil` for anything else.
    static func decodeBase64(_ text: String) -> Data? {
        var compact = [UInt8]()
        compact.reserveCapacity(text.utf8.count)
        for byte in text.utf8 where byte != 0x20 && byte != 0x0A && byte != 0x0D && byte != 0x09 {
            compact.append(byte)
        }
        return Data(base64Encoded: Data(compact))
    }

    /// A decimal written as `[-]digits[.digits][e[-]digits]` or `NaN`; stricter than
    /// `Decimal(string:)`, which stops quietly at the first bad character.
    static func parseDecimal(_ text: String) -> Decimal? {
        if text == "NaN" { return Decimal.nan }
        var sawDigit = false
        var sawPoint = false
        var sawExponent = false
        var previous: Character = " "
        for (offset, character) in text.enumerated() {
            switch character {
            case "0"..."9": sawDigit = true
            case "-", "+": guard offset == 0 || previous == "e" || previous == "E" else { return nil }
            case ".":
                guard !sawPoint, !sawExponent else { return nil }
                sawPoint = true
            case "e", "E":
                guard sawDigit, !sawExponent else { return nil }
                sawExponent = true
            default: return nil
            }
            previous = character
        }
        guard sawDigit, previous.isNumber || previous == "." else { return nil }
        return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
    }

    /// `text` without surrounding white space; returns `text` itself (no copy, no Foundation call)
    /// in the common case where there is none.
    private static func trimmed(_ text: String) -> String {
        guard let first = text.utf8.first, let last = text.utf8.last else { return text }
        if !isSpace(first) && !isSpace(last) { return text }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte >= 0x80
    }
}
