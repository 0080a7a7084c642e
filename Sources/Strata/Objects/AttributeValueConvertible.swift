import Foundation

/// A Swift type that converts to and from ``StoreValue``: what typed property wrappers and
/// ``ManagedObject/value(forKey:as:)`` read and write.
public protocol AttributeValueConvertible {
    /// The value as stored.
    var storeValue: StoreValue { get }
    /// Converts a stored value; `nil` when it does not fit.
    init?(storeValue: StoreValue)
    /// What a `nil` stored value reads as: `nil` for optionals, zero or empty for scalars.
    static var valueForNil: Self { get }
}

extension Int: AttributeValueConvertible {
    public var storeValue: StoreValue { .integer(Int64(self)) }
    public init?(storeValue: StoreValue) {
        guard let n = storeValue.integerValue, let v = Int(exactly: n) else { return nil }
        self = v
    }
    public static var valueForNil: Int { 0 }
}

extension Int16: AttributeValueConvertible {
    public var storeValue: StoreValue { .integer(Int64(self)) }
    public init?(storeValue: StoreValue) {
        guard let n = storeValue.integerValue, let v = Int16(exactly: n) else { return nil }
        self = v
    }
    public static var valueForNil: Int16 { 0 }
}

extension Int32: AttributeValueConvertible {
    public var storeValue: StoreValue { .integer(Int64(self)) }
    public init?(storeValue: StoreValue) {
        guard let n = storeValue.integerValue, let v = Int32(exactly: n) else { return nil }
        self = v
    }
    public static var valueForNil: Int32 { 0 }
}

extension Int64: AttributeValueConvertible {
    public var storeValue: StoreValue { .integer(self) }
    public init?(storeValue: StoreValue) {
        guard let n = storeValue.integerValue else { return nil }
        self = n
    }
    public static var valueForNil: Int64 { 0 }
}

extension Double: AttributeValueConvertible {
    public var storeValue: StoreValue { .double(self) }
    public init?(storeValue: StoreValue) {
        switch storeValue {
        case .double(let d): self = d
        case .integer(let i): self = Double(i)
        case .decimal(let d): self = NSDecimalNumber(decimal: d).doubleValue
        default: return nil
        }
    }
    public static var valueForNil: Double { 0 }
}

extension Float: AttributeValueConvertible {
    public var storeValue: StoreValue { .double(Double(self)) }
    public init?(storeValue: StoreValue) {
        guard let d = Double(storeValue: storeValue) else { return nil }
        self = Float(d)
    }
    public static var valueForNil: Float { 0 }
}

extension Decimal: AttributeValueConvertible {
    public var storeValue: StoreValue { .decimal(self) }
    public init?(storeValue: StoreValue) {
        switch storeValue {
        case .decimal(let d): self = d
        case .integer(let i): self = Decimal(i)
        case .double(let d): self = Decimal(d)
        default: return nil
        }
    }
    public static var valueForNil: Decimal { 0 }
}

extension Bool: AttributeValueConvertible {
    public var storeValue: StoreValue { .bool(self) }
    public init?(storeValue: StoreValue) {
        switch storeValue {
        case .bool(let b): self = b
        case .integer(let i): self = i != 0
        default: return nil
        }
    }
    public static var valueForNil: Bool { false }
}

extension String: AttributeValueConvertible {
    public var storeValue: StoreValue { .string(self) }
    public init?(storeValue: StoreValue) {
        guard case .string(let s) = storeValue else { return nil }
        self = s
    }
    public static var valueForNil: String { "" }
}

extension Date: AttributeValueConvertible {
    public var storeValue: StoreValue { .date(self) }
    public init?(storeValue: StoreValue) {
        guard case .date(let d) = storeValue else { return nil }
        self = d
    }
    public static var valueForNil: Date { Date(timeIntervalSinceReferenceDate: 0) }
}

extension Data: AttributeValueConvertible {
    public var storeValue: StoreValue { .binary(self) }
    public init?(storeValue: StoreValue) {
        guard case .binary(let d) = storeValue else { return nil }
        self = d
    }
    public static var valueForNil: Data { Data() }
}

extension UUID: AttributeValueConvertible {
    public var storeValue: StoreValue { .uuid(self) }
    public init?(storeValue: StoreValue) {
        guard case .uuid(let u) = storeValue else { return nil }
        self = u
    }
    public static var valueForNil: UUID { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
}

extension URL: AttributeValueConvertible {
    public var storeValue: StoreValue { .uri(self) }
    public init?(storeValue: StoreValue) {
        guard case .uri(let u) = storeValue else { return nil }
        self = u
    }
    public static var valueForNil: URL { URL(fileURLWithPath: "/") }
}

extension Optional: AttributeValueConvertible where Wrapped: AttributeValueConvertible {
    public var storeValue: StoreValue { self?.storeValue ?? .null }
    public init?(storeValue: StoreValue) {
        if storeValue.isNull {
            self = .none
        } else {
            guard let value = Wrapped(storeValue: storeValue) else { return nil }
            self = .some(value)
        }
    }
    public static var valueForNil: Wrapped? { nil }
}

extension StoreValue {
    /// The integer, when this is an integer or a boolean.
    public var integerValue: Int64? {
        switch self {
        case .integer(let i): i
        case .bool(let b): b ? 1 : 0
        default: nil
        }
    }
}
