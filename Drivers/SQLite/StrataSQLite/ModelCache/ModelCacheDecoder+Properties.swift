import Foundation
import Strata

/// The flags of an archived property description.
///
/// Newer archives pack them in the integer `_P`; when `_P` is absent or zero, the Boolean keys
/// `NSIsOptional`, `NSIsTransient`, `NSIsReadOnly`, `NSIndexedBySpotlight`, `NSIsOrdered` and
/// `NSAllowsCloudEncryption` hold them. Bits of `_P`: 0x2 optional, 0x4 read-only, 0x8 transient,
/// 0x10 no validation predicates, 0x20 no validation warnings, 0x40 no user info, 0x80 no version
/// hash modifier, 0x100 indexed by Spotlight, 0x200 stored in an external record, 0x400 ordered,
/// 0x800 allows cloud encryption (0x1 marks a packed value; see docs/formats/sqlite-model-cache.md).
struct ArchivedPropertyFlags {
    var isOptional: Bool
    var isReadOnly: Bool
    var isTransient: Bool
    var isOrdered: Bool

    init(_ object: ArchivedObject) {
        let packed = object["_P"]?.integer ?? 0
        if packed != 0 {
            isOptional = packed & 0x2 != 0
            isReadOnly = packed & 0x4 != 0
            isTransient = packed & 0x8 != 0
            isOrdered = packed & 0x400 != 0
        } else {
            isOptional = object["NSIsOptional"]?.bool ?? false
            isReadOnly = object["NSIsReadOnly"]?.bool ?? false
            isTransient = object["NSIsTransient"]?.bool ?? false
            isOrdered = object["NSIsOrdered"]?.bool ?? false
        }
    }
}

extension ModelCacheDecoder {
    /// Decodes one property; `nil` for kinds Strata's model does not hold (fetched properties).
    static func decodeProperty(_ object: ArchivedObject, key: String, entity: String) throws -> PropertyDescription? {
        let name = object["NSPropertyName"]?.string ?? key
        if object.isKind(of: "NSFetchedPropertyDescription") { return nil }
        if object.isKind(of: "NSRelationshipDescription") {
            return .relationship(try decodeRelationship(object, name: name, entity: entity))
        }
        if object.isKind(of: "NSAttributeDescription") || object.isKind(of: "NSDerivedAttributeDescription") {
            return .attribute(try decodeAttribute(object, name: name, entity: entity))
        }
        throw SQLiteError(
            .unsupported,
            "property '\(entity).\(name)' is an archived '\(object.className ?? "scalar")', which Strata does not read")
    }

    static func decodeRelationship(_ object: ArchivedObject, name: String, entity: String) throws
        -> RelationshipDescription
    {
        guard
            let destination = object["_NSDestinationEntityName"]?.string
                ?? object["NSDestinationEntity"]?["NSEntityName"]?.string
        else {
            throw SQLiteError(.corrupt, "relationship '\(entity).\(name)' has no destination entity")
        }
        let inverse =
            object["_NSInverseRelationshipName"]?.string
            ?? object["NSInverseRelationship"]?["NSPropertyName"]?.string
        let ruleValue = object["NSDeleteRule"]?.integer ?? Int64(DeleteRule.nullify.rawValue)
        guard let rule = DeleteRule(rawValue: Int(ruleValue)) else {
            throw SQLiteError(.corrupt, "relationship '\(entity).\(name)' has unknown delete rule \(ruleValue)")
        }
        let flags = ArchivedPropertyFlags(object)
        // Core Data: isToMany == (maxCount != 1). 0 means unbounded; -1 (NSUInteger max written as a
        // 32-bit int) is seen for unbounded to-many relationships too, and is kept as -1 because
        // Core Data's version hash feeds the count as it is (ModelVersionHashes).
        let storedMax = object["NSMaxCount"]?.integer ?? 0
        let toMany = storedMax != 1
        let maxCount = storedMax == -1 ? -1 : storedMax < 0 || storedMax > Int64(Int32.max) ? 0 : Int(storedMax)
        let minCount = Int(Swift.max(0, Swift.min(object["NSMinCount"]?.integer ?? 0, Int64(Int32.max))))
        let renaming = object["NSRenamingIdentifier"]?.string
        return RelationshipDescription(
            name, destination: destination, inverse: inverse, toMany: toMany, ordered: flags.isOrdered,
            isOptional: flags.isOptional, isTransient: flags.isTransient, minCount: minCount, maxCount: maxCount,
            deleteRule: rule, renamingIdentifier: renaming == name ? nil : renaming,
            versionHashModifier: nonEmpty(object["NSVersionHashModifier"]?.string),
            userInfo: stringDictionary(object["NSUserInfo"]))
    }

    static func decodeAttribute(_ object: ArchivedObject, name: String, entity: String) throws -> AttributeDescription {
        guard let rawType = object["NSAttributeType"]?.integer else {
            throw SQLiteError(.corrupt, "attribute '\(entity).\(name)' has no NSAttributeType")
        }
        guard let type = AttributeType(rawValue: Int(rawType)) else {
            throw SQLiteError(
                .unsupported, "attribute '\(entity).\(name)' has type \(rawType), which Strata does not support")
        }
        if type == .composite {
            // How NSCompositeAttributeDescription archives its elements is not known from any
            // public source or Apple-written store, so Strata does not guess.
            throw SQLiteError(
                .unsupported,
                "attribute '\(entity).\(name)' is a composite attribute, which Strata cannot read from Apple's model cache yet; open the store with its model file (--model)"
            )
        }
        let flags = ArchivedPropertyFlags(object)
        // NSFlagsKey: 0x1 has maximum (NSMaxValueName), 0x2 has minimum (NSMinValueName), 0x4 allows
        // external binary storage, 0x10 preserves the value in history on deletion, 0x20 file-backed future.
        let attributeFlags = object["NSFlagsKey"]?.integer ?? 0
        let renaming = object["NSRenamingIdentifier"]?.string
        var userInfo = stringDictionary(object["NSUserInfo"])
        if object.isKind(of: "NSDerivedAttributeDescription") {
            // Kept as the model loader keeps Xcode's derivationExpression: Core Data's version hash
            // of a derived attribute is the hash of this text (ModelVersionHashes).
            userInfo[AttributeDescription.derivationExpressionUserInfoKey] =
                ArchivedExpressionFormat.format(object["NSDerivationExpression"]) ?? ""
        }
        return AttributeDescription(
            name, type, isOptional: flags.isOptional, defaultValue: defaultValue(object["NSDefaultValue"], type),
            isTransient: flags.isTransient,
            validation: validationRules(object, type: type, flags: attributeFlags),
            valueTransformerName: nonEmpty(object["NSValueTransformerName"]?.string),
            valueClassName: nonEmpty(object["NSAttributeValueClassName"]?.string),
            allowsExternalBinaryDataStorage: attributeFlags & 0x4 != 0,
            isIndexed: object["NSIsIndexed"]?.bool ?? false,
            renamingIdentifier: renaming == name ? nil : renaming,
            versionHashModifier: nonEmpty(object["NSVersionHashModifier"]?.string),
            userInfo: userInfo, preservesValueInHistoryOnDeletion: attributeFlags & 0x10 != 0)
    }

    /// A default value converted to the attribute's type; `.null` when absent or not representable
    /// (transformable values are archived objects of app classes).
    static func defaultValue(_ object: ArchivedObject?, _ type: AttributeType) -> StoreValue {
        guard let object else { return .null }
        switch type {
        case .integer16, .integer32, .integer64:
            return object.integer.map { .integer($0) } ?? .null
        case .double, .float:
            return object.real.map { .double($0) } ?? .null
        case .decimal:
            if let number = object.integer { return .decimal(Decimal(number)) }
            if let number = object.real { return .decimal(Decimal(number)) }
            return object.string.flatMap { Decimal(string: $0, locale: Locale(identifier: "en_US_POSIX")) }
                .map { .decimal($0) } ?? .null
        case .string:
            return object.string.map { .string($0) } ?? .null
        case .boolean:
            return object.bool.map { .bool($0) } ?? .null
        case .date:
            return object.date.map { .date($0) } ?? .null
        case .binaryData:
            return object.data.map { .binary($0) } ?? .null
        case .uuid:
            guard let bytes = object["NS.uuidbytes"]?.data ?? object.data, bytes.count == 16 else { return .null }
            let b = [UInt8](bytes)
            return .uuid(
                UUID(
                    uuid: (
                        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                        b[14], b[15]
                    )))
        case .uri:
            guard let text = object["NS.relative"]?.string ?? object.string else { return .null }
            let base = object["NS.base"]?["NS.relative"]?.string.flatMap { URL(string: $0) }
            return URL(string: text, relativeTo: base).map { .uri($0.absoluteURL) } ?? .null
        case .transformable, .undefined, .objectID, .composite:
            return .null
        }
    }

    /// Minimum and maximum rules from `NSMinValueName`/`NSMaxValueName` when `NSFlagsKey` says
    /// they are present: lengths for strings, integers for integer types, reference-date seconds
    /// for dates, doubles otherwise.
    static func validationRules(_ object: ArchivedObject, type: AttributeType, flags: Int64) -> ValidationRules {
        var rules = ValidationRules()
        let bound: (String) -> StoreValue? = { key in
            guard let value = object[key] else { return nil }
            switch type {
            case .integer16, .integer32, .integer64: return value.integer.map { .integer($0) }
            case .date: return value.real.map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
            case .decimal: return value.real.map { .decimal(Decimal($0)) }
            default: return value.real.map { .double($0) }
            }
        }
        if type == .string {
            if flags & 0x2 != 0, let length = object["NSMinValueName"]?.integer { rules.minimumLength = Int(length) }
            if flags & 0x1 != 0, let length = object["NSMaxValueName"]?.integer { rules.maximumLength = Int(length) }
        } else {
            if flags & 0x2 != 0 { rules.minimum = bound("NSMinValueName") }
            if flags & 0x1 != 0 { rules.maximum = bound("NSMaxValueName") }
        }
        return rules
    }
}
