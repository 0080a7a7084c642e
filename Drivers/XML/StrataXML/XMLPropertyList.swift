import Foundation
import Strata

/// The XML property list embedded in `<metadata>`: read from the streaming reader and written by
/// the store writer, value for value (``MetadataValue``), without Foundation's plist classes (which
/// on Linux blur integers, Booleans and reals).
///
/// Dates are written as plist dates (`2024-05-01T12:00:00Z`); a date with a fractional second
/// keeps it after a `.` (`…:00.25Z`), which Apple's parser would drop but ours keeps exactly.
enum XMLPropertyList {
    // MARK: Reading

    /// How deep arrays and dictionaries may nest in a property list: deeper is refused as corrupt
    /// (the reading recursion is bounded here, not by the stack).
    static let maximumDepth = 64

    /// Reads the value of the `<plist>` element the reader is on and leaves it on `</plist>`.
    static func read(_ reader: XMLStreamReader) throws -> MetadataValue? {
        guard !reader.isEmptyElement else { return nil }
        var result: MetadataValue?
        while try reader.read() {
            switch reader.node {
            case .element:
                guard result == nil else {
                    throw reader.corrupt("expected one value in <plist>, found a second <\(reader.name)>")
                }
                result = try readValue(reader, depth: 0)
            case .endElement: return result
            case .text, .cdata: throw reader.corruptText("expected a property-list value in <plist>, found text")
            default: continue
            }
        }
        throw reader.corrupt("the file ends inside <plist>", element: "plist")
    }

    /// Reads the value element the reader is on, `depth` arrays and dictionaries deep, leaving it
    /// on the element's end.
    static func readValue(_ reader: XMLStreamReader, depth: Int) throws -> MetadataValue {
        let nests = reader.isNamed("dict") || reader.isNamed("array")
        if nests, depth >= maximumDepth {
            throw reader.corrupt(
                "expected property-list arrays and dictionaries nested at most \(maximumDepth) deep, found deeper nesting"
            )
        }
        if reader.isNamed("dict") { return .dictionary(try readDictionary(reader, depth: depth + 1)) }
        if reader.isNamed("array") {
            var items: [MetadataValue] = []
            guard !reader.isEmptyElement else { return .array(items) }
            while try reader.read() {
                switch reader.node {
                case .element: items.append(try readValue(reader, depth: depth + 1))
                case .endElement: return .array(items)
                case .text, .cdata: throw reader.corruptText("expected a value in <array>, found text")
                default: continue
                }
            }
            throw reader.corrupt("the file ends inside <array>", element: "array")
        }
        if reader.isNamed("true") {
            _ = try XMLDocumentScanner.elementText(reader)
            return .bool(true)
        }
        if reader.isNamed("false") {
            _ = try XMLDocumentScanner.elementText(reader)
            return .bool(false)
        }
        let name = reader.name
        let text = try XMLDocumentScanner.elementText(reader)
        switch name {
        case "string": return .string(text)
        case "integer":
            guard let value = Int64(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw reader.corrupt(
                    "expected a 64-bit integer in <integer>, found '\(text.prefix(40))'", element: name)
            }
            return .integer(value)
        case "real":
            guard let value = parseReal(text) else {
                throw reader.corrupt("expected a real number in <real>, found '\(text.prefix(40))'", element: name)
            }
            return .double(value)
        case "data":
            guard let data = XMLValueCoding.decodeBase64(text) else {
                throw reader.corrupt("expected base64 in <data>", element: name)
            }
            return .data(data)
        case "date":
            guard let date = parseDate(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw reader.corrupt(
                    "expected a date like 2024-05-01T12:00:00Z in <date>, found '\(text.prefix(40))'", element: name)
            }
            return .date(date)
        default:
            throw reader.corrupt(
                "expected a property-list value (dict, array, string, integer, real, true, false, data, date), found <\(name)>",
                element: name)
        }
    }

    private static func readDictionary(_ reader: XMLStreamReader, depth: Int) throws -> [String: MetadataValue] {
        var result: [String: MetadataValue] = [:]
        guard !reader.isEmptyElement else { return result }
        var key: String?
        while try reader.read() {
            switch reader.node {
            case .element:
                if reader.isNamed("key") {
                    guard key == nil else {
                        throw reader.corrupt("expected a value after <key>\(key!)</key>, found another <key>")
                    }  // checked non-nil
                    key = try XMLDocumentScanner.elementText(reader)
                } else {
                    guard let name = key else {
                        throw reader.corrupt("expected <key> in <dict>, found <\(reader.name)>")
                    }
                    result[name] = try readValue(reader, depth: depth)
                    key = nil
                }
            case .endElement:
                if let key { throw reader.corrupt("expected a value for key '\(key)' before </dict>", element: "dict") }
                return result
            case .text, .cdata: throw reader.corruptText("expected <key> in <dict>, found text")
            default: continue
            }
        }
        throw reader.corrupt("the file ends inside <dict>", element: "dict")
    }

    static func parseReal(_ text: String) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        switch trimmed.lowercased() {
        case "+infinity", "infinity", "+inf", "inf": return .infinity
        case "-infinity", "-inf": return -.infinity
        case "nan": return .nan
        default: return Double(trimmed)
        }
    }

    // MARK: Writing

    /// Writes `value` as a `<plist>` element indented by `indent` spaces.
    static func write(_ value: MetadataValue, indent: Int, to writer: inout XMLByteWriter) {
        pad(indent, &writer)
        writer.raw("<plist version=\"1.0\">\n")
        writeValue(value, indent: indent + 4, to: &writer)
        pad(indent, &writer)
        writer.raw("</plist>\n")
    }

    private static func writeValue(_ value: MetadataValue, indent: Int, to writer: inout XMLByteWriter) {
        pad(indent, &writer)
        switch value {
        case .string(let text):
            writer.raw("<string>")
            writer.text(text)
            writer.raw("</string>\n")
        case .integer(let number):
            writer.raw("<integer>")
            writer.integer(number)
            writer.raw("</integer>\n")
        case .double(let number):
            writer.raw("<real>")
            writer.ascii(
                number.isNaN ? "nan" : number.isInfinite ? (number < 0 ? "-infinity" : "+infinity") : "\(number)")
            writer.raw("</real>\n")
        case .bool(let flag): writer.raw(flag ? "<true/>\n" : "<false/>\n")
        case .data(let data):
            writer.raw("<data>")
            writer.base64(data)
            writer.raw("</data>\n")
        case .date(let date):
            writer.raw("<date>")
            writer.ascii(formatDate(date))
            writer.raw("</date>\n")
        case .array(let items):
            writer.raw("<array>\n")
            for item in items { writeValue(item, indent: indent + 4, to: &writer) }
            pad(indent, &writer)
            writer.raw("</array>\n")
        case .dictionary(let entries):
            writer.raw("<dict>\n")
            for key in entries.keys.sorted() {
                pad(indent + 4, &writer)
                writer.raw("<key>")
                writer.text(key)
                writer.raw("</key>\n")
                writeValue(entries[key]!, indent: indent + 4, to: &writer)  // key from entries.keys
            }
            pad(indent, &writer)
            writer.raw("</dict>\n")
        }
    }

    static func pad(_ count: Int, _ writer: inout XMLByteWriter) {
        writer.raw([UInt8](repeating: UInt8(ascii: " "), count: count))
    }

    // MARK: Dates

    private static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!  // 0 is a valid offset
        return calendar
    }()

    /// `yyyy-MM-ddTHH:mm:ss[.fraction]Z`, exact to the bit for dates within a few thousand years.
    static func formatDate(_ date: Date) -> String {
        let interval = date.timeIntervalSinceReferenceDate
        let seconds = interval.rounded(.down)
        let parts = utc.dateComponents(
            [.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSinceReferenceDate: seconds))
        func two(_ value: Int?) -> String {
            let v = value ?? 0
            return v < 10 ? "0\(v)" : "\(v)"
        }
        var text =
            "\(parts.year ?? 2001)-\(two(parts.month))-\(two(parts.day))T\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second))"
        let fraction = interval - seconds
        if fraction > 0 {
            let digits = XMLValueCoding.plainDecimal(fraction)  // "0.25"
            if digits.hasPrefix("0.") { text += String(digits.dropFirst()) }
        }
        return text + "Z"
    }

    /// Parses what ``formatDate(_:)`` writes (and Apple's plain `…Z` form).
    static func parseDate(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? { Int(String(decoding: bytes[range], as: UTF8.self)) }
        let yearEnd = bytes.firstIndex(of: UInt8(ascii: "-"), after: 1)
        guard let yearEnd, bytes.count >= yearEnd + 16, let year = number(0..<yearEnd),
            bytes[yearEnd + 3] == UInt8(ascii: "-"), bytes[yearEnd + 6] == UInt8(ascii: "T"),
            let month = number(yearEnd + 1..<yearEnd + 3), let day = number(yearEnd + 4..<yearEnd + 6),
            let hour = number(yearEnd + 7..<yearEnd + 9), let minute = number(yearEnd + 10..<yearEnd + 12),
            let second = number(yearEnd + 13..<yearEnd + 15)
        else { return nil }
        var components = DateComponents()
        (components.year, components.month, components.day) = (year, month, day)
        (components.hour, components.minute, components.second) = (hour, minute, second)
        guard let base = utc.date(from: components) else { return nil }
        let rest = bytes[(yearEnd + 15)..<(bytes.count - 1)]
        if rest.isEmpty { return base }
        guard rest.first == UInt8(ascii: "."), let fraction = Double("0" + String(decoding: rest, as: UTF8.self)) else {
            return nil
        }
        return Date(timeIntervalSinceReferenceDate: base.timeIntervalSinceReferenceDate + fraction)
    }
}

extension Array where Element == UInt8 {
    fileprivate func firstIndex(of byte: UInt8, after start: Int) -> Int? {
        var index = start
        while index < count {
            if self[index] == byte { return index }
            index += 1
        }
        return nil
    }
}
