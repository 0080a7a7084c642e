import Foundation
import Synchronization

/// Turns the value of a transformable attribute into bytes to store, and back.
///
/// Register a transformer under the name the model gives (`valueTransformerName`) with
/// ``AttributeValueTransformers/register(_:named:)``. Transformable attributes without a
/// transformer name accept and return `Data` unchanged.
public protocol AttributeValueTransformer: Sendable {
    /// Encodes a value for storage.
    func transformedValue(_ value: Any?) throws -> Data?
    /// Decodes stored bytes.
    func reverseTransformedValue(_ data: Data?) throws -> Any?
}

/// The registry of named value transformers.
public enum AttributeValueTransformers {
    private static let registry = Locked<[String: any AttributeValueTransformer]>([
        JSONStringArrayTransformer.name: JSONStringArrayTransformer()
    ])

    /// Registers (or replaces) a transformer under `name`.
    public static func register(_ transformer: any AttributeValueTransformer, named name: String) {
        registry.withLock { $0[name] = transformer }
    }

    /// The transformer registered under `name`, or `nil`.
    public static func transformer(named name: String) -> (any AttributeValueTransformer)? {
        registry.withLock { $0[name] }
    }
}

/// A ready-made transformer storing `[String]` as JSON, registered as `StrataJSONStringArray`.
public struct JSONStringArrayTransformer: AttributeValueTransformer {
    /// The name it is registered under.
    public static let name = "StrataJSONStringArray"

    /// Creates the transformer.
    public init() {}

    public func transformedValue(_ value: Any?) throws -> Data? {
        guard let value else { return nil }
        guard let strings = value as? [String] else {
            throw StoreError(.invalidRequest, "\(Self.name) stores [String], got \(type(of: value))")
        }
        return try JSONEncoder().encode(strings)
    }

    public func reverseTransformedValue(_ data: Data?) throws -> Any? {
        guard let data else { return nil }
        return try JSONDecoder().decode([String].self, from: data)
    }
}
