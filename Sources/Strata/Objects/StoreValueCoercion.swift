import Foundation

/// Converts Swift values and loosely typed store values to the exact ``StoreValue`` case an
/// attribute stores, or explains why not.
public enum StoreValueCoercion {
    /// Converts a Swift value for `attribute`.
    ///
    /// - Throws: ``StoreError/Code/invalidRequest`` naming the entity and attribute.
    public static func coerce(any value: Any?, to attribute: AttributeDescription, entity: String) throws -> StoreValue
    {
        guard let value else { return .null }
        if let fast = exactMatch(value, attribute.type) { return fast }
        if value is NSNull { return .null }
        if let stored = value as? StoreValue { return try coerce(stored, to: attribute, entity: entity) }
        let raw: StoreValue
        switch value {
        case let v as Int: raw = .integer(Int64(v))
        case let v as Int8: raw = .integer(Int64(v))
        case let v as Int16: raw = .integer(Int64(v))
        case let v as Int32: raw = .integer(Int64(v))
        case let v as Int64: raw = .integer(v)
        case let v as UInt: raw = UInt64(v) <= UInt64(Int64.max) ? .integer(Int64(v)) : .double(Double(v))
        case let v as UInt8: raw = .integer(Int64(v))
        case let v as UInt16: raw = .integer(Int64(v))
        case let v as UInt32: raw = .integer(Int64(v))
        case let v as UInt64: raw = v <= UInt64(Int64.max) ? .integer(Int64(v)) : .double(Double(v))
        case let v as Double: raw = .double(v)
        case let v as Float: raw = .double(Double(v))
        case let v as Decimal: raw = .decimal(v)
        case let v as Bool: raw = .bool(v)
        case let v as String: raw = .string(v)
        case let v as Substring: raw = .string(String(v))
        case let v as Date: raw = .date(v)
        case let v as Data: raw = .binary(v)
        case let v as [UInt8]: raw = .binary(Data(v))
        case let v as UUID: raw = .uuid(v)
        case let v as URL: raw = .uri(v)
        default:
            throw mismatch(attribute, entity, "a value of type \(type(of: value))")
        }
        return try coerce(raw, to: attribute, entity: entity)
    }

    /// The value when it already has the Swift type the attribute stores (one cast, the common
    /// case), checked for integer width; `nil` to take the general path.
    @inline(__always)
    static func exactMatch(_ value: Any?, _ type: AttributeType) -> StoreValue? {
        // Casting the optional itself copies no existential out first; `nil` matches nothing.
        switch type {
        case .string:
            if let text = value as? String { return .string(text) }
            return nil
        case .integer64:
            if let n = value as? Int64 { return .integer(n) }
            if let n = value as? Int { return .integer(Int64(n)) }
            return nil
        case .integer32:
            if let n = value as? Int32 { return .integer(Int64(n)) }
            guard let n = value as? Int, n >= Int(Int32.min), n <= Int(Int32.max) else { return nil }
            return .integer(Int64(n))
        case .integer16:
            if let n = value as? Int16 { return .integer(Int64(n)) }
            guard let n = value as? Int, n >= Int(Int16.min), n <= Int(Int16.max) else { return nil }
            return .integer(Int64(n))
        case .double:
            if let d = value as? Double { return .double(d) }
            return nil
        case .date:
            if let d = value as? Date { return .date(d) }
            return nil
        case .boolean:
            if let b = value as? Bool { return .bool(b) }
            return nil
        default: return nil
        }
    }

    /// The value when it already is the case an attribute of `type` stores (and, for integers,
    /// fits its width); `nil` to take ``coerce(_:to:entity:)``, which converts or explains. Reads no
    /// attribute description, so the common typed write copies none.
    @inline(__always)
    static func exactMatch(_ value: StoreValue, _ type: AttributeType) -> StoreValue? {
        switch (value, type) {
        case (.null, _): value
        case (.string, .string), (.double, .double), (.date, .date), (.bool, .boolean), (.binary, .binaryData),
            (.uuid, .uuid), (.uri, .uri), (.decimal, .decimal), (.integer, .integer64):
            value
        case (.integer(let n), .integer32), (.integer(let n), .integer16): type.fits(n) ? value : nil
        default: nil
        }
    }

    /// Converts a store value to the case `attribute` stores (an integer for a Double attribute
    /// becomes `.double`, a Float is rounded to `Float` precision, integers are range-checked).
    ///
    /// - Throws: ``StoreError/Code/invalidRequest`` naming the entity and attribute.
    public static func coerce(_ value: StoreValue, to attribute: AttributeDescription, entity: String) throws
        -> StoreValue
    {
        if value.isNull { return .null }
        switch attribute.type {
        case .integer16, .integer32, .integer64:
            let integer: Int64
            switch value {
            case .integer(let i): integer = i
            case .bool(let b): integer = b ? 1 : 0
            case .double(let d) where d.rounded() == d && abs(d) < 9.2e18: integer = Int64(d)
            case .decimal(let d) where d == d.rounded0: integer = NSDecimalNumber(decimal: d).int64Value
            default: throw mismatch(attribute, entity, value.kindName)
            }
            // integerRange is non-nil for the three integer types matched above.
            guard attribute.type.integerRange!.contains(integer) else {
                throw StoreError(
                    .invalidRequest,
                    "\(integer) does not fit attribute '\(entity).\(attribute.name)' (\(attribute.type.xcodeName))")
            }
            return .integer(integer)
        case .double, .float:
            let number: Double
            switch value {
            case .double(let d): number = d
            case .integer(let i): number = Double(i)
            case .decimal(let d): number = NSDecimalNumber(decimal: d).doubleValue
            case .bool(let b): number = b ? 1 : 0
            default: throw mismatch(attribute, entity, value.kindName)
            }
            return .double(attribute.type == .float ? Double(Float(number)) : number)
        case .decimal:
            switch value {
            case .decimal: return value
            case .integer(let i): return .decimal(Decimal(i))
            case .double(let d): return .decimal(Decimal(string: "\(d)") ?? Decimal(d))
            case .string(let s):
                guard let d = Decimal(string: s) else { throw mismatch(attribute, entity, "string '\(s)'") }
                return .decimal(d)
            default: throw mismatch(attribute, entity, value.kindName)
            }
        case .boolean:
            switch value {
            case .bool: return value
            case .integer(let i) where i == 0 || i == 1: return .bool(i == 1)
            default: throw mismatch(attribute, entity, value.kindName)
            }
        case .string:
            guard case .string = value else { throw mismatch(attribute, entity, value.kindName) }
            return value
        case .date:
            switch value {
            case .date: return value
            case .double(let d): return .date(Date(timeIntervalSinceReferenceDate: d))
            case .integer(let i): return .date(Date(timeIntervalSinceReferenceDate: Double(i)))
            default: throw mismatch(attribute, entity, value.kindName)
            }
        case .binaryData, .transformable:
            guard case .binary = value else { throw mismatch(attribute, entity, value.kindName) }
            return value
        case .uuid:
            switch value {
            case .uuid: return value
            case .string(let s):
                guard let u = UUID(uuidString: s) else { throw mismatch(attribute, entity, "string '\(s)'") }
                return .uuid(u)
            case .binary(let d) where d.count == 16:
                return .uuid(d.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) })
            default: throw mismatch(attribute, entity, value.kindName)
            }
        case .uri:
            switch value {
            case .uri: return value
            case .string(let s):
                guard let u = URL(string: s) else { throw mismatch(attribute, entity, "string '\(s)'") }
                return .uri(u)
            default: throw mismatch(attribute, entity, value.kindName)
            }
        case .undefined, .objectID:
            return value
        case .composite:
            throw StoreError(
                .invalidRequest,
                "attribute '\(entity).\(attribute.name)' is a composite: set it with a dictionary keyed by element name, or its elements by key path"
            )
        }
    }

    private static func mismatch(_ attribute: AttributeDescription, _ entity: String, _ found: String) -> StoreError {
        StoreError(
            .invalidRequest,
            "attribute '\(entity).\(attribute.name)' stores \(attribute.type.xcodeName) values, got \(found)")
    }
}

extension Decimal {
    fileprivate var rounded0: Decimal {
        var input = self
        var result = Decimal()
        NSDecimalRound(&result, &input, 0, .plain)
        return result
    }
}
