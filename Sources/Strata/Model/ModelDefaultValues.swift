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

    /// What a `defaultValueString` gives an attribute.
    enum Outcome: Equatable {
        /// The value, as written.
        case value(StoreValue)
        /// A value read as Foundation reads the text, with a note for a warning (`3.7` → 3).
        case adjusted(StoreValue, note: String)
        /// No default, with the reason for a warning.
        case dropped(reason: String)
    }

    /// The default value `string` stands for in an attribute of `type`, read as Core Data's tools
    /// read it (momc converts with Foundation's string conversions; docs/models.md).
    ///
    /// - Strings are kept as written, the empty string included; for every other type an empty
    ///   (or all-space) string means no default, as Xcode writes it for "no default".
    /// - Booleans follow `NSString.boolValue`: after spaces, an optional sign and leading zeros,
    ///   `Y`, `y`, `T`, `t` or a digit 1-9 is YES, anything else NO (`"0.0"` and `"NO"` are NO).
    /// - Integers accept decimal notation with a zero fraction (`"3.0"`, `"1e3"`); another
    ///   fraction is cut toward zero as `integerValue` does, with a note.
    /// - Text that does not read as the type, a number outside the type's range, and any default
    ///   on a Binary, Transformable, Undefined or ObjectID attribute (Xcode offers none) give no
    ///   default, with the reason.
    static func defaultValue(_ string: String, for type: AttributeType) -> Outcome {
        if type == .string { return .value(.string(string)) }
        if string.trimmingCharacters(in: .whitespaces).isEmpty { return .value(.null) }
        do throws(Reason) {
            switch type {
            case .integer16, .integer32, .integer64:
                let (value, exact) = try integer(string, for: type)
                return exact
                    ? .value(.integer(value))
                    : .adjusted(
                        .integer(value),
                        note: "is not a whole number; it is read as \(value), as Foundation's integerValue reads it")
            case .decimal: return .value(.decimal(try decimal(string)))
            case .double: return .value(.double(try double(string)))
            // Float attributes hold Float precision (see StoreValue.double).
            case .float: return .value(.double(Double(Float(try double(string)))))
            case .boolean: return .value(.bool(boolean(string)))
            case .date:
                guard let seconds = try? double(string) else {  // the reason is replaced by a clearer one
                    throw Reason(
                        "a Date default is written as defaultDateTimeInterval (seconds since 2001), not as text")
                }
                return .value(.date(Date(timeIntervalSinceReferenceDate: seconds)))
            case .uuid:
                guard let uuid = UUID(uuidString: string.trimmingCharacters(in: .whitespaces)) else {
                    throw Reason("it is not a UUID")
                }
                return .value(.uuid(uuid))
            case .uri:
                guard let url = URL(string: string.trimmingCharacters(in: .whitespaces)) else {
                    throw Reason("it is not a URI")
                }
                return .value(.uri(url))
            case .string: return .value(.string(string))
            case .binaryData, .transformable, .undefined, .objectID, .composite:
                throw Reason("a \(type.xcodeName) attribute takes no default written as a string")
            }
        } catch {
            return .dropped(reason: error.text)
        }
    }

    /// A validation limit (`minValueString`/`maxValueString`) for a numeric attribute. An integer
    /// attribute's limit with a fraction (left by a change of type from Double) is kept exactly,
    /// as a double.
    static func limit(_ string: String, for type: AttributeType) throws(Reason) -> StoreValue {
        switch type {
        case .integer16, .integer32, .integer64:
            let trimmed = string.trimmingCharacters(in: .whitespaces)
            if let value = Int64(trimmed) { return .integer(value) }
            let number = try double(trimmed)
            if number.rounded() == number, abs(number) < 9.0e18 { return .integer(Int64(number)) }
            return .double(number)
        case .decimal: return .decimal(try decimal(string))
        case .double, .float: return .double(try double(string))
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

    /// A whole number that fits `type`, and whether it was written exactly: decimal notation
    /// with a zero fraction (`2.0`, `1e3`) is exact; another fraction is cut toward zero.
    static func integer(_ string: String, for type: AttributeType) throws(Reason) -> (Int64, exact: Bool) {
        let trimmed = string.trimmingCharacters(in: .whitespaces)
        var value = Int64(trimmed)
        var exact = true
        if value == nil, isDecimalSyntax(trimmed), let number = Double(trimmed), abs(number) < 9.0e18 {
            value = Int64(number.rounded(.towardZero))
            exact = number.rounded(.towardZero) == number
        }
        guard let value else { throw Reason("it is not a whole number") }
        if let range = type.integerRange, !range.contains(value) {
            throw Reason(
                "\(value) does not fit in an \(type.xcodeName) attribute (\(range.lowerBound)...\(range.upperBound))")
        }
        return (value, exact)
    }

    /// A number in decimal notation (sign, digits, optional fraction and exponent).
    static func double(_ string: String) throws(Reason) -> Double {
        let trimmed = string.trimmingCharacters(in: .whitespaces)
        guard isDecimalSyntax(trimmed), let value = Double(trimmed) else { throw Reason("it is not a number") }
        return value
    }

    /// A decimal number, kept exactly.
    static func decimal(_ string: String) throws(Reason) -> Decimal {
        let trimmed = string.trimmingCharacters(in: .whitespaces)
        // Decimal(string:) accepts a valid prefix ("12abc" → 12), so check the whole syntax first.
        guard isDecimalSyntax(trimmed), let value = Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX"))
        else { throw Reason("it is not a decimal number") }
        return value
    }

    /// A Boolean as `NSString.boolValue` reads it (Apple's documentation of `boolValue`): after
    /// leading white space, an optional `+`/`-` and any zeros, YES when the next character is
    /// `Y`, `y`, `T`, `t` or a digit 1-9, else NO.
    static func boolean(_ string: String) -> Bool {
        var scalars = Substring(string).unicodeScalars.drop { $0.properties.isWhitespace }
        if let sign = scalars.first, sign == "+" || sign == "-" { scalars = scalars.dropFirst() }
        scalars = scalars.drop { $0 == "0" }
        guard let first = scalars.first else { return false }
        return "YyTt123456789".unicodeScalars.contains(first)
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
