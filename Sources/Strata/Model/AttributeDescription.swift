import Foundation

/// An attribute of an entity: its name, storage type, optionality, default and validation rules.
///
/// A value type: build it, hand it to an ``EntityDescription``, and the model keeps its own copy.
public struct AttributeDescription: Sendable, Hashable {
    /// The attribute's name, unique within its entity and the entity's ancestors.
    public var name: String
    /// The storage type.
    public var type: AttributeType
    /// Whether `nil` is allowed when the object is saved.
    public var isOptional: Bool
    /// Whether the attribute lives in memory only and is never stored.
    public var isTransient: Bool
    /// The value a newly inserted object starts with.
    public var defaultValue: StoreValue
    /// Validation rules checked at save.
    public var validation: ValidationRules
    /// For transformable attributes: the name of the registered ``AttributeValueTransformer``.
    public var valueTransformerName: String?
    /// The Swift or Objective-C class Xcode recorded for the value (informational).
    public var valueClassName: String?
    /// Whether large binary values may be kept outside the row (honoured where a driver can).
    public var allowsExternalBinaryDataStorage: Bool
    /// Whether the attribute is indexed (legacy per-attribute index flag).
    public var isIndexed: Bool
    /// Whether Core Data keeps the value in persistent history when the object is deleted (Xcode's
    /// "Preserve After Deletion", `preserveAfterDeletion`). Strata keeps no persistent history; the
    /// flag is kept because it takes part in Core Data's version hash
    /// (``ModelVersionHashes``).
    public var preservesValueInHistoryOnDeletion: Bool = false
    /// The identifier used to map a renamed attribute during migration.
    public var renamingIdentifier: String?
    /// A string mixed into the version hash to force a new version.
    public var versionHashModifier: String?
    /// Free-form key/value pairs.
    public var userInfo: [String: String]
    /// For a composite attribute (``AttributeType/composite``): its elements, in order. Each is an
    /// attribute, or a nested composite with elements of its own. Empty for other types.
    ///
    /// Make composites with ``composite(_:elements:compositeName:isOptional:isTransient:renamingIdentifier:versionHashModifier:userInfo:)``.
    public var elements: [AttributeDescription] = []
    /// For a composite attribute: the name of the model-level composite it uses (Xcode's
    /// `composite="Location"`), or `nil` when it was built without one. Informational; code
    /// generation names the composite's Swift type after it.
    public var compositeName: String?

    /// Creates an attribute.
    ///
    /// - Parameters:
    ///   - name: The attribute's name.
    ///   - type: The storage type.
    ///   - isOptional: Whether `nil` is allowed at save (default `true`, as in Xcode's editor).
    ///   - defaultValue: The value of a newly inserted object.
    ///   - isTransient: Whether the attribute is never stored.
    ///   - validation: Rules checked at save.
    ///   - valueTransformerName: For `.transformable`: the registered transformer's name.
    public init(
        _ name: String, _ type: AttributeType, isOptional: Bool = true, defaultValue: StoreValue = .null,
        isTransient: Bool = false, validation: ValidationRules = ValidationRules(),
        valueTransformerName: String? = nil, valueClassName: String? = nil,
        allowsExternalBinaryDataStorage: Bool = false, isIndexed: Bool = false,
        renamingIdentifier: String? = nil, versionHashModifier: String? = nil, userInfo: [String: String] = [:],
        preservesValueInHistoryOnDeletion: Bool = false
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue
        self.isTransient = isTransient
        self.validation = validation
        self.valueTransformerName = valueTransformerName
        self.valueClassName = valueClassName
        self.allowsExternalBinaryDataStorage = allowsExternalBinaryDataStorage
        self.isIndexed = isIndexed
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.userInfo = userInfo
        self.preservesValueInHistoryOnDeletion = preservesValueInHistoryOnDeletion
    }

    /// Creates a composite attribute: a value made of named elements, read and written as a
    /// dictionary (`value(forKey: "location")`) or element by element with key paths
    /// (`location.latitude`), which predicates and sort keys also use.
    ///
    /// - Parameters:
    ///   - name: The attribute's name.
    ///   - elements: The elements, each an attribute or a nested composite; relationships are not
    ///     elements. Optionality, defaults and validation rules are each element's own.
    ///   - compositeName: The name of the model-level composite (Xcode's `composite="…"`).
    ///   - isOptional: Whether the whole value may be `nil` (every element `nil`) at save.
    ///   - isTransient: Whether the composite lives in memory only.
    public static func composite(
        _ name: String, elements: [AttributeDescription], compositeName: String? = nil, isOptional: Bool = true,
        isTransient: Bool = false, renamingIdentifier: String? = nil, versionHashModifier: String? = nil,
        userInfo: [String: String] = [:]
    ) -> AttributeDescription {
        var attribute = AttributeDescription(
            name, .composite, isOptional: isOptional, isTransient: isTransient, renamingIdentifier: renamingIdentifier,
            versionHashModifier: versionHashModifier, userInfo: userInfo)
        attribute.elements = elements
        attribute.compositeName = compositeName
        return attribute
    }

    /// Whether this is a composite attribute.
    public var isComposite: Bool { type == .composite }

    /// The leaf elements of a composite (elements that are not composites themselves, nested ones
    /// included), each with its key path below the composite (`latitude`, `address.city`), in
    /// declaration order, depth first. Empty for other attributes.
    public var leafElements: [(keyPath: String, attribute: AttributeDescription)] {
        var result: [(String, AttributeDescription)] = []
        func walk(_ elements: [AttributeDescription], _ prefix: String) {
            for element in elements {
                let path = prefix.isEmpty ? element.name : prefix + "." + element.name
                if element.isComposite { walk(element.elements, path) } else { result.append((path, element)) }
            }
        }
        walk(elements, "")
        return result
    }
}

/// Declarative validation rules of an attribute, as Xcode's model editor offers them.
public struct ValidationRules: Sendable, Hashable {
    /// The smallest allowed value (numbers and dates), inclusive.
    public var minimum: StoreValue?
    /// The largest allowed value (numbers and dates), inclusive.
    public var maximum: StoreValue?
    /// The shortest allowed string, in characters.
    public var minimumLength: Int?
    /// The longest allowed string, in characters.
    public var maximumLength: Int?
    /// A regular expression the whole string must match.
    public var regularExpression: String?

    /// Creates rules; all are off by default.
    public init(
        minimum: StoreValue? = nil, maximum: StoreValue? = nil, minimumLength: Int? = nil,
        maximumLength: Int? = nil, regularExpression: String? = nil
    ) {
        self.minimum = minimum
        self.maximum = maximum
        self.minimumLength = minimumLength
        self.maximumLength = maximumLength
        self.regularExpression = regularExpression
    }

    /// Whether no rule is set.
    public var isEmpty: Bool {
        minimum == nil && maximum == nil && minimumLength == nil && maximumLength == nil && regularExpression == nil
    }
}
