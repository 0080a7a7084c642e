import Foundation

/// Turns the strings Xcode writes for defaults and validation limits (`defaultValueString`,
/// `minValueString`, `defaultDateTimeInterval`, …) into ``StoreValue``s of an attribute's type.
///
/// Every function throws a plain reason string; the decoder wraps it in a ``ModelError`` with the
/// file, line and element.
enum ModelDefaultValues {
    struct Reason: Error {
        var text: String
        init(_ text: String) { self.text = text }
    }

    /// The default value `string` stands for in an attribute of `type`.
    ///
    /// Binary, transformable, undefined and object-ID attributes cannot carry a default written as
    /// a string (Xcode offers none); for them the string is ignored and the default is `nil`.
    static func defaultValue(_ string: String, for type: AttributeType) throws(Reason) -> StoreValue {
        switch type {
        case .integer16, .integer32, .integer64:
            return .integer(try integer(string, for: type))
        case .decimal:
            return .decimal(try decimal(string))
        case .double:
            return .double(try double(string))
        case .float:
            // Float attributes hold Float precision (see StoreValue.double).
            return .double(Double(Float(try double(string))))
        case .string:
            return .string(string)
        case .boolean:
            return .bool(try boolean(string))
        case .date:
            return .date(try date(string))
        case .uuid:
            guard let uuid = UUID(uuidString: string.trimmingCharacters(in: .whitespaces)) else {
                throw Reason("'\(string)' is not a UUID")
            }
            return .uuid(uuid)
        case .uri:
            guard let url = URL(string: string.trimmingCharacters(in: .whitespaces)) else {
                throw Reason("'\(string)' is not a URI")
            }
            return .uri(url)
        case .binaryData, .transformable, .undefined, .objectID:
            return .null
        }
    }

    /// A validation limit (`minValueString`/`maxValueString`) for a numeric attribute.
    static func limit(_ string: String, for type: AttributeType) throws(Reason) -> StoreValue {
        switch type {
        case .integer16, .integer32, .integer64: .integer(try integer(string, for: .integer64))
        case .decimal: .decimal(try decimal(string))
        case .double, .float: .double(try double(string))
        default: throw Reason("a value limit does not apply to \(type.xcodeName) attributes")
        }
    }

    /// A length limit (`minValueString`/`maxValueString` of String and Binary attributes).
    static func length(_ string: String) throws(Reason) -> Int {
        guard let value = Int(string.trimmingCharacters(in: .whitespaces)), value >= 0 else {
            throw Reason("'\(string)' is not a length (a whole number of at least 0)")
        }
        return value
    }

    /// A date written as seconds since 2001-01-01 00:00:00 UTC (`defaultDateTimeInterval`, …).
    static func date(_ string: String) throws(Reason) -> Date {
        Date(timeIntervalSinceReferenceDate: try double(string))
    }

    /// A whole number that fits `type`; a decimal with no fraction (`2.0`) is accepted too.
    static func integer(_ string: String, for type: AttributeType) throws(Reason) -> Int64 {
        let trimmed = string.trimmingCharacters(in: .whitespaces)
        var value = Int64(trimmed)
        if value == nil, isDecimalSyntax(trimmed), let number = Double(trimmed), number.rounded() == number,
            abs(number) < 9.0e18
        {
            value = Int64(number)
        }
        guard let value else { throw Reason("'\(string)' is not a whole number") }
        if let range = type.integerRange, !range.contains(value) {
            throw Reason("\(value) does not fit in an \(type.xcodeName) attribute (\(range.lowerBound)...\(range.upperBound))")
        }
        return value
    }

    /// A number in decimal notation (sign, digits, optional fraction and exponent).
    static func double(_ string: String) throws(Reason) -> Double {
        let trimmed = string.trimmingCharacters(in: .whitespaces)
        guard isDecimalSyntax(trimmed), let value = Double(trimmed) else { throw Reason("'\(string)' is not a number") }
        return value
    }

    /// A decimal number, kept exactly.
    static func decimal(_ string: String) throws(Reason) -> Decimal {
        let trimmed = string.trimmingCharacters(in: .whitespaces)
        // Decimal(string:) accepts a valid prefix ("12abc" → 12), so check the whole syntax first.
        guard isDecimalSyntax(trimmed), let value = Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX"))
        else { throw Reason("'\(string)' is not a decimal number") }
        return value
    }

    /// A Boolean: `YES`/`NO` as Xcode writes them; `true`/`false` and `1`/`0` are accepted too.
    static func boolean(_ string: String) throws(Reason) -> Bool {
        switch string.trimmingCharacters(in: .whitespaces).lowercased() {
        case "yes", "true", "1": return true
        case "no", "false", "0": return false
        default: throw Reason("'\(string)' is not a Boolean (YES or NO)")
        }
    }

    /// Whether `text` is `[+-]digits[.digits][(e|E)[+-]digits]` with at least one digit before
    /// the exponent (a leading or trailing dot is allowed, as in `.5` and `5.`).
    static func isDecimalSyntax(_ text: String) -> Bool {
        var scalars = Substring(text).unicodeScalars[...]
        func digits() -> Int {
            var count = 0
            while let first = scalars.first, ("0"..."9").contains(first) {
                scalars.removeFirst()
                count += 1
            }
            return count
        }
        if let first = scalars.first, first == "+" || first == "-" { scalars.removeFirst() }
        var mantissa = digits()
        if scalars.first == "." {
            scalars.removeFirst()
            mantissa += digits()
        }
        guard mantissa > 0 else { return false }
        if let first = scalars.first, first == "e" || first == "E" {
            scalars.removeFirst()
            if let sign = scalars.first, sign == "+" || sign == "-" { scalars.removeFirst() }
            guard digits() > 0 else { return false }
        }
        return scalars.isEmpty
    }
}
