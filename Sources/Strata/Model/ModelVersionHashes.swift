import Foundation

/// Core Data's version hashes of a model: what Apple's framework records in a store's metadata
/// (`NSStoreModelVersionHashes`, `NSStoreModelVersionHashesDigest`,
/// `NSStoreModelVersionChecksumKey`) and compares with a model before it opens the store.
///
/// Strata computes them with Apple's own algorithm, established from public decompilations of
/// Core Data and reproduced byte for byte for every entity hash of the corpus stores (55 of 55)
/// and of the SampleModel Xcode models; docs/models.md ("Core Data's version hashes") gives the
/// algorithm field by field. They identify the model of a store Apple's Core Data wrote, so that
/// such a store can be matched to one version of a model bundle exactly and migrated.
///
/// Strata's own stores keep Strata's hash scheme (``EntityDescription/versionHash``,
/// ``ManagedObjectModel/versionHash``) for their own compatibility checks; both are documented.
public struct ModelVersionHashes: Sendable, Hashable {
    /// Entity name → Core Data's 32-byte version hash (`NSEntityDescription.versionHash`).
    public var entities: [String: Data]
    /// `NSStoreModelVersionHashesDigest`: base64 of SHA-512 over each entity's name (UTF-8) and
    /// hash, in name order.
    public var digest: String
    /// `NSManagedObjectModel.versionChecksum` (`NSStoreModelVersionChecksumKey`): base64 of
    /// SHA-256 over the entity hashes in name order.
    public var checksum: String

    /// The `NSStoreModelVersionHashesVersion` Core Data writes beside the hashes.
    public static let hashesVersion: Int64 = 3
    /// The metadata key of the entity hashes.
    public static let entityHashesKey = "NSStoreModelVersionHashes"
    /// The metadata key of ``digest``.
    public static let digestKey = "NSStoreModelVersionHashesDigest"
    /// The metadata key of ``checksum``.
    public static let checksumKey = "NSStoreModelVersionChecksumKey"
    /// The metadata key of ``hashesVersion``.
    public static let hashesVersionKey = "NSStoreModelVersionHashesVersion"
    /// The metadata key of the model's version identifiers.
    public static let identifiersKey = "NSStoreModelVersionIdentifiers"

    /// Computes the hashes of `entities` (a resolved model's, parents before children).
    init(_ entities: [EntityDescription]) {
        var hashes: [String: Data] = [:]
        let byName = Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0) })
        for entity in entities { hashes[entity.name] = Self.entityHash(entity, byName: byName, known: hashes) }
        self.entities = hashes
        let names = hashes.keys.sorted(by: Self.precedes)
        var digest = SHA512Digest()
        var checksum = SHA256Digest()
        for name in names {
            digest.update(name.utf8)
            digest.update(hashes[name] ?? Data())
            checksum.update(hashes[name] ?? Data())
        }
        self.digest = digest.finalize().base64EncodedString()
        self.checksum = checksum.finalize().base64EncodedString()
    }

    /// NSString's `compare:` without options: UTF-16 code units in order (`Z` before `a`).
    static func precedes(_ a: String, _ b: String) -> Bool { a.utf16.lexicographicallyPrecedes(b.utf16) }

    /// `-[NSEntityDescription _newVersionHashInStyle:0]`.
    static func entityHash(_ entity: EntityDescription, byName: [String: EntityDescription], known: [String: Data])
        -> Data
    {
        var digest = SHA256Digest()
        digest.update(entity.name.utf8)
        digest.update(CollectionOfOne(entity.isAbstract ? 1 : 0))
        if let parent = entity.superentityName {
            digest.update(
                known[parent] ?? byName[parent].map { entityHash($0, byName: byName, known: known) } ?? Data())
        }
        let tombstones = Set(
            (entity.userInfo["NSPersistentHistoryTombstoneAttributes"] ?? "").split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            })
        // A composite attribute is one property of Core Data's entity (an NSCompositeAttributeDescription,
        // type 2100), while Strata gives each of its leaf elements a slot named by key path.
        let hashed =
            entity.properties.filter { !$0.name.contains(".") } + entity.compositeAttributes.map { .attribute($0) }
        for property in hashed.sorted(by: { precedes($0.name, $1.name) }) where !property.isTransient {
            switch property {
            case .attribute(let attribute):
                digest.update(attributeHash(attribute, tombstone: tombstones.contains(attribute.name)))
            case .relationship(let relationship):
                digest.update(relationshipHash(relationship, in: entity, byName: byName))
            }
        }
        if let modifier = entity.versionHashModifier { digest.update(modifier.utf8) }
        for constraint in entity.uniquenessConstraints.map({ $0.joined(separator: ".") }).sorted(by: precedes)
        where !constraint.isEmpty {
            digest.update(constraint.utf8)
        }
        return digest.finalize()
    }

    /// `-[NSPropertyDescription _versionHash:inStyle:]`: name, flags (optional 1, transient 2,
    /// read-only 4) as a little-endian UInt16, and the modifier.
    static func propertyHash(name: String, isOptional: Bool, isTransient: Bool, isReadOnly: Bool, modifier: String?)
        -> Data
    {
        var digest = SHA256Digest()
        digest.update(name.utf8)
        let flags: UInt16 = (isOptional ? 1 : 0) | (isTransient ? 2 : 0) | (isReadOnly ? 4 : 0)
        digest.update(littleEndian(flags))
        if let modifier { digest.update(modifier.utf8) }
        return digest.finalize()
    }

    static func attributeHash(_ attribute: AttributeDescription, tombstone: Bool) -> Data {
        if let derivation = attribute.userInfo[AttributeDescription.derivationExpressionUserInfoKey] {
            // NSDerivedAttributeDescription hashes its expression text only (Apple computes the
            // attribute hash and never feeds it in); the filtering predicate is not kept.
            return SHA256Digest.hash(Self.derivationFormat(derivation).utf8)
        }
        var digest = SHA256Digest()
        digest.update(
            propertyHash(
                name: attribute.name, isOptional: attribute.isOptional, isTransient: attribute.isTransient,
                isReadOnly: false, modifier: attribute.versionHashModifier))
        digest.update(littleEndian(Int32(truncatingIfNeeded: attribute.type.rawValue)))
        if attribute.allowsExternalBinaryDataStorage { digest.update(CollectionOfOne(1)) }
        if attribute.preservesValueInHistoryOnDeletion || tombstone { digest.update(CollectionOfOne(1)) }
        return digest.finalize()
    }

    static func relationshipHash(
        _ relationship: RelationshipDescription, in entity: EntityDescription, byName: [String: EntityDescription]
    ) -> Data {
        var digest = SHA256Digest()
        digest.update(
            propertyHash(
                name: relationship.name, isOptional: relationship.isOptional, isTransient: relationship.isTransient,
                isReadOnly: false, modifier: relationship.versionHashModifier))
        digest.update(relationship.destinationEntityName.utf8)
        if let inverse = relationship.inverseName, !isOwnInverse(relationship, in: entity, byName: byName) {
            digest.update(inverse.utf8)
        }
        digest.update(littleEndian(Int32(truncatingIfNeeded: relationship.maxCount)))
        digest.update(littleEndian(Int32(truncatingIfNeeded: relationship.minCount)))
        if relationship.isOrdered { digest.update(littleEndian(UInt16(1))) }
        return digest.finalize()
    }

    /// Whether the relationship is its own inverse: the inverse has its name and lives on the
    /// entity or an ancestor (where an inherited declaration is).
    static func isOwnInverse(
        _ relationship: RelationshipDescription, in entity: EntityDescription, byName: [String: EntityDescription]
    ) -> Bool {
        guard relationship.inverseName == relationship.name else { return false }
        var current: EntityDescription? = entity
        var steps = 0
        while let line = current, steps <= byName.count {
            if line.name == relationship.destinationEntityName { return true }
            current = line.superentityName.flatMap { byName[$0] }
            steps += 1
        }
        return false
    }

    /// Core Data's `predicateFormat` of a derivation written as Xcode writes it: a key path ending
    /// `.@count` becomes `count:(…)`, one ending `.@sum` becomes `sum:(…)` (Core Data's setter
    /// rewrites them so); other text is used as it is.
    static func derivationFormat(_ text: String) -> String {
        for (suffix, function) in [(".@count", "count:"), (".@sum", "sum:")] where text.hasSuffix(suffix) {
            return "\(function)(\(text.dropLast(suffix.count)))"
        }
        return text
    }

    private static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }
}

extension ManagedObjectModel {
    /// Core Data's version hashes of the model (``ModelVersionHashes``).
    ///
    /// - Complexity: O(entities × properties); computed on each call.
    public var coreDataVersionHashes: ModelVersionHashes { ModelVersionHashes(entities) }

    /// Core Data's `versionChecksum`: the base64 checksum that identifies this model version
    /// (what staged migration stages name models by).
    public var versionChecksum: String { coreDataVersionHashes.checksum }
}
