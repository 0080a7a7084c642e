import Foundation
import Strata

/// How the round-trip suite shows names, values and properties in failures: one line each,
/// everything outside printable ASCII escaped (so `café` and `cafe` + U+0301 look different),
/// long values cut.
public enum RoundTripText {
    /// The longest value text shown; longer ones are cut with their length noted.
    static let maximumValueLength = 80

    /// `name` as written, with characters outside printable ASCII as `\u{…}`.
    public static func name(_ name: String) -> String {
        var out = ""
        for scalar in name.unicodeScalars {
            if (0x20...0x7E).contains(scalar.value) && scalar != "\\" {
                out.unicodeScalars.append(scalar)
            } else {
                out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return out
    }

    /// A value, one line, at most about ``maximumValueLength`` characters.
    public static func value(_ value: StoreValue) -> String {
        switch value {
        case .null: return "nil"
        case .integer(let v): return "\(v)"
        case .double(let v): return v.isNaN ? "nan" : "\(v)" + (v == 0 && v.sign == .minus ? " (-0)" : "")
        case .decimal(let v): return "decimal \(v)"
        case .string(let s):
            let shown = "\"" + name(String(s.unicodeScalars.prefix(maximumValueLength))) + "\""
            let count = s.unicodeScalars.count
            return count > maximumValueLength ? shown + "… (\(count) scalars)" : shown
        case .bool(let v): return "\(v)"
        case .date(let d): return "date \(d.timeIntervalSinceReferenceDate)"
        case .binary(let data):
            let head = data.prefix(16).map { String(format: "%02x", $0) }.joined()
            return "\(data.count) bytes \(head)\(data.count > 16 ? "…" : "")"
        case .uuid(let u): return u.uuidString
        case .uri(let u): return "<" + name(String(u.absoluteString.prefix(maximumValueLength))) + ">"
        case .reference(let id): return "ref \(id)"
        case .references(let ids): return "refs \(ids)"
        case .unfetched: return "unfetched"
        }
    }

    /// A property as one line: `name: Type (optional, default …)` or `name -> Destination (…)`.
    public static func property(_ property: PropertyDescription) -> String {
        switch property {
        case .attribute(let a): return attribute(a)
        case .relationship(let r):
            var flags = [r.isToMany ? (r.isOrdered ? "ordered to-many" : "to-many") : "to-one"]
            flags.append(r.inverseName.map { "inverse \(name($0))" } ?? "no inverse")
            if !r.isOptional { flags.append("required") }
            flags.append(r.deleteRule.xcodeName)
            return "\(name(r.name)) -> \(name(r.destinationEntityName)) (\(flags.joined(separator: ", ")))"
        }
    }

    static func attribute(_ a: AttributeDescription) -> String {
        if a.isComposite {
            let elements = a.elements.map(attribute).joined(separator: "; ")
            return "\(name(a.name)): Composite\(a.isOptional ? "" : " (required)") { \(elements) }"
        }
        var flags: [String] = [a.isOptional ? "optional" : "required"]
        if !a.defaultValue.isNull { flags.append("default \(value(a.defaultValue))") }
        if a.isTransient { flags.append("transient") }
        if let transformer = a.valueTransformerName { flags.append("transformer \(transformer)") }
        if a.allowsExternalBinaryDataStorage { flags.append("external storage") }
        if a.isIndexed { flags.append("indexed") }
        return "\(name(a.name)): \(a.type.xcodeName) (\(flags.joined(separator: ", ")))"
    }
}
