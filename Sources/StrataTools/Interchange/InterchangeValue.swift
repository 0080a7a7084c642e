import Foundation
import Strata

/// Attribute values in the JSON interchange format (docs/formats/json.md): integers as numbers,
/// doubles as numbers (`"NaN"`, `"Infinity"`, `"-Infinity"` as strings), decimals as strings,
/// dates as ISO 8601 with fractional seconds (dates without a four-digit year as a number of
/// seconds since 2001-01-01, and non-finite ones as the double strings), binary and transformable
/// values as base64, UUIDs and URIs as strings. Every stored value is written, none traps, and
/// each reads back to the same value.
public enum InterchangeValue {
    /// The JSON form of an attribute's stored value.
    public static func json(_ value: StoreValue) -> JSONValue {
        switch value {
        case .null, .unfetched, .reference, .references: return .null
        case .integer(let i): return .int(i)
        case .double(let d): return number(d)
        case .decimal(let d): return .string(d.description)
        case .string(let s): return .string(s)
        case .bool(let b): return .bool(b)
        case .date(let d):
            if let text = ISO8601Timestamp.exactString(from: d) { return .string(text) }
            return number(d.timeIntervalSinceReferenceDate)
        case .binary(let data): return .string(data.base64EncodedString())
        case .uuid(let u): return .string(u.uuidString)
        case .uri(let u): return .string(u.absoluteString)
        }
    }

    /// A double as JSON: a number, or `"NaN"`, `"Infinity"`, `"-Infinity"`.
    private static func number(_ d: Double) -> JSONValue {
        if d.isNaN { return .string("NaN") }
        if d.isInfinite { return .string(d > 0 ? "Infinity" : "-Infinity") }
        return .number(d.description)
    }

    /// The stored value of `json` for `attribute`, or a message saying what is wrong.
    public static func storeValue(_ json: JSONValue, for attribute: AttributeDescription) -> Result<StoreValue, Problem>
    {
        if case .null = json { return .success(.null) }
        func wrong(_ expected: String) -> Result<StoreValue, Problem> {
            .failure(
                Problem(
                    "expected \(expected) for \(attribute.type.xcodeName) attribute '\(attribute.name)', found \(json.kindName)"
                ))
        }
        switch attribute.type {
        case .integer16, .integer32, .integer64:
            guard case .number(let text) = json else { return wrong("an integer") }
            guard let value = Int64(text) else { return wrong("an integer") }
            if let range = attribute.type.integerRange, !range.contains(value) {
                return .failure(
                    Problem("\(value) does not fit \(attribute.type.xcodeName) attribute '\(attribute.name)'"))
            }
            return .success(.integer(value))
        case .double, .float:
            switch json {
            case .number(let text):
                guard let value = Double(text) else { return wrong("a number") }
                return .success(.double(attribute.type == .float ? Double(Float(value)) : value))
            case .string("NaN"): return .success(.double(.nan))
            case .string("Infinity"): return .success(.double(.infinity))
            case .string("-Infinity"): return .success(.double(-.infinity))
            default: return wrong("a number")
            }
        case .decimal:
            let text: String
            switch json {
            case .string(let s): text = s
            case .number(let n): text = n
            default: return wrong("a decimal string")
            }
            if text == "NaN" { return .success(.decimal(.nan)) }  // how export writes a NaN decimal
            guard isDecimalText(text), let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
            else {
                return .failure(Problem("'\(text)' is not a decimal number (attribute '\(attribute.name)')"))
            }
            return .success(.decimal(value))
        case .string:
            guard case .string(let s) = json else { return wrong("a string") }
            return .success(.string(s))
        case .boolean:
            guard case .bool(let b) = json else { return wrong("true or false") }
            return .success(.bool(b))
        case .date:
            switch json {
            case .number(let text):
                guard let seconds = Double(text), seconds.isFinite else {
                    return wrong("an ISO 8601 date string or seconds since 2001")
                }
                return .success(.date(Date(timeIntervalSinceReferenceDate: seconds)))
            case .string("NaN"): return .success(.date(Date(timeIntervalSinceReferenceDate: .nan)))
            case .string("Infinity"): return .success(.date(Date(timeIntervalSinceReferenceDate: .infinity)))
            case .string("-Infinity"): return .success(.date(Date(timeIntervalSinceReferenceDate: -.infinity)))
            default: break
            }
            guard case .string(let s) = json else { return wrong("an ISO 8601 date string") }
            guard let date = ISO8601Timestamp.date(from: s) else {
                return .failure(
                    Problem(
                        "'\(s)' is not an ISO 8601 date like 2024-05-01T12:30:00.000Z (attribute '\(attribute.name)')"))
            }
            return .success(.date(date))
        case .binaryData, .transformable:
            guard case .string(let s) = json else { return wrong("a base64 string") }
            guard let data = Data(base64Encoded: s) else {
                return .failure(Problem("the value of '\(attribute.name)' is not valid base64"))
            }
            return .success(.binary(data))
        case .uuid:
            guard case .string(let s) = json else { return wrong("a UUID string") }
            guard let uuid = UUID(uuidString: s) else {
                return .failure(Problem("'\(s)' is not a UUID (attribute '\(attribute.name)')"))
            }
            return .success(.uuid(uuid))
        case .uri:
            guard case .string(let s) = json else { return wrong("a URI string") }
            guard let url = URL(string: s) else {
                return .failure(Problem("'\(s)' is not a URI (attribute '\(attribute.name)')"))
            }
            return .success(.uri(url))
        case .undefined, .objectID, .composite:
            // Composites are read element by element (InterchangeDocument); their own type carries no value.
            return .failure(
                Problem(
                    "attribute '\(attribute.name)' has type \(attribute.type.xcodeName), which the interchange format does not carry"
                ))
        }
    }

    private static func isDecimalText(_ text: String) -> Bool {
        var chars = Substring(text)
        if chars.first == "-" || chars.first == "+" { chars = chars.dropFirst() }
        let parts = chars.split(separator: "e", maxSplits: 1, omittingEmptySubsequences: false)
        let mantissa = parts[0].split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard !mantissa.isEmpty, mantissa.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            mantissa.contains(where: { !$0.isEmpty })
        else { return false }
        if parts.count == 2 {
            var exponent = parts[1]
            if exponent.first == "-" || exponent.first == "+" { exponent = exponent.dropFirst() }
            return !exponent.isEmpty && exponent.allSatisfy { $0.isASCII && $0.isNumber }
        }
        return true
    }

    /// A problem with one value, before its JSON path is known.
    public struct Problem: Error, Sendable {
        /// What is wrong.
        public var message: String
        /// Creates a problem.
        public init(_ message: String) { self.message = message }
    }
}
