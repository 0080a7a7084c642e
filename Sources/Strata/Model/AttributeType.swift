import Foundation

/// The storage type of an attribute, with Core Data's `NSAttributeType` raw values.
public enum AttributeType: Int, Sendable, Hashable, CaseIterable {
    case undefined = 0
    case integer16 = 100
    case integer32 = 200
    case integer64 = 300
    case decimal = 400
    case double = 500
    case float = 600
    case string = 700
    case boolean = 800
    case date = 900
    case binaryData = 1000
    case uuid = 1100
    case uri = 1200
    case transformable = 1800
    case objectID = 2000
    /// A composite attribute (Core Data's `NSCompositeAttributeType`): a value made of named
    /// elements, each an attribute or a nested composite (see ``AttributeDescription/elements``).
    case composite = 2100

    /// The name Xcode writes in a model's `contents` file (`attributeType="Integer 16"`).
    public var xcodeName: String {
        switch self {
        case .undefined: "Undefined"
        case .integer16: "Integer 16"
        case .integer32: "Integer 32"
        case .integer64: "Integer 64"
        case .decimal: "Decimal"
        case .double: "Double"
        case .float: "Float"
        case .string: "String"
        case .boolean: "Boolean"
        case .date: "Date"
        case .binaryData: "Binary"
        case .uuid: "UUID"
        case .uri: "URI"
        case .transformable: "Transformable"
        case .objectID: "ObjectID"
        case .composite: "Composite"
        }
    }

    /// The type Xcode names `name`, or `nil` when the name is not one Xcode writes.
    public init?(xcodeName name: String) {
        guard let match = Self.allCases.first(where: { $0.xcodeName == name }) else { return nil }
        self = match
    }

    /// Whether values are integers (Integer 16, 32 or 64).
    public var isInteger: Bool { self == .integer16 || self == .integer32 || self == .integer64 }

    /// Whether values are numbers of any kind (integers, Decimal, Double, Float).
    public var isNumeric: Bool { isInteger || self == .decimal || self == .double || self == .float }

    /// Whether `value` fits the type's integer width (always, for other types).
    @inlinable public func fits(_ value: Int64) -> Bool {
        switch self {
        case .integer16: Int64(Int16.min) <= value && value <= Int64(Int16.max)
        case .integer32: Int64(Int32.min) <= value && value <= Int64(Int32.max)
        default: true
        }
    }

    /// The range an integer attribute of this type holds, or `nil` for other types.
    public var integerRange: ClosedRange<Int64>? {
        switch self {
        case .integer16: Int64(Int16.min)...Int64(Int16.max)
        case .integer32: Int64(Int32.min)...Int64(Int32.max)
        case .integer64: Int64.min...Int64.max
        default: nil
        }
    }
}
