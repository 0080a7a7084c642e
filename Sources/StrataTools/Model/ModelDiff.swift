import Foundation
import Strata

/// The differences between two models (`strata model diff`): entities and properties added,
/// removed, renamed (matched by renaming identifier) and changed, and whether a store written with
/// the old model needs migration to open with the new one.
public struct ModelDiff: Sendable {
    /// One difference.
    public struct Change: Sendable, Hashable, CustomStringConvertible {
        /// What kind of difference.
        public enum Kind: String, Sendable, Hashable {
            case added, removed, renamed, changed
        }
        /// The kind.
        public var kind: Kind
        /// `Entity` or `Entity.property` in the new model (the old one for removals).
        public var name: String
        /// Details: the old name for renames, what changed for changes.
        public var detail: String?

        public var description: String {
            "\(kind.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)) \(name)\(detail.map { "  (\($0))" } ?? "")"
        }
    }

    /// Every difference, entities first then their properties.
    public var changes: [Change] = []
    /// Whether the models' version hashes differ (a store needs migration).
    public var needsMigration: Bool
    /// The old model's version hash (hex).
    public var oldVersionHash: String
    /// The new model's version hash (hex).
    public var newVersionHash: String
    /// Whether a store of the old model can be migrated to the new one by inference alone
    /// (Core Data's lightweight migration): `true` when no migration is needed.
    public var isLightweight = true
    /// When not lightweight: each change a mapping model is needed for, one line each.
    public var changesNeedingMappingModel: [String] = []

    /// Compares two models.
    public init(old: ManagedObjectModel, new: ManagedObjectModel) {
        needsMigration = old.versionHash != new.versionHash
        oldVersionHash = old.versionHash.hexString
        newVersionHash = new.versionHash.hexString
        if needsMigration {
            do {
                _ = try MappingModel.inferredMappingModel(forSourceModel: old, destinationModel: new)
            } catch let error as MigrationError {
                isLightweight = false
                changesNeedingMappingModel = error.changes.isEmpty ? [error.message] : error.changes
            } catch {
                isLightweight = false
                changesNeedingMappingModel = ["\(error)"]
            }
        }
        var matchedOld = Set<String>()
        var pairs: [(EntityDescription, EntityDescription)] = []
        for entity in new.entities {
            if let same = old.entity(named: entity.name) {
                pairs.append((same, entity))
                matchedOld.insert(same.name)
            } else if let renamed = Self.renamed(entity.renamingIdentifier, in: old.entities, matched: matchedOld) {
                pairs.append((renamed, entity))
                matchedOld.insert(renamed.name)
                changes.append(Change(kind: .renamed, name: entity.name, detail: "was \(renamed.name)"))
            } else {
                changes.append(Change(kind: .added, name: entity.name))
            }
        }
        for entity in old.entities where !matchedOld.contains(entity.name) {
            changes.append(Change(kind: .removed, name: entity.name))
        }
        for (before, after) in pairs {
            if before.superentityName != after.superentityName {
                changes.append(
                    Change(
                        kind: .changed, name: after.name,
                        detail: "parent \(before.superentityName ?? "none") → \(after.superentityName ?? "none")"))
            }
            if before.isAbstract != after.isAbstract {
                changes.append(
                    Change(
                        kind: .changed, name: after.name,
                        detail: after.isAbstract ? "now abstract" : "no longer abstract"))
            }
            if before.uniquenessConstraints != after.uniquenessConstraints {
                changes.append(Change(kind: .changed, name: after.name, detail: "unique constraints"))
            }
            compareProperties(before, after)
        }
    }

    private static func renamed(_ identifier: String?, in entities: [EntityDescription], matched: Set<String>)
        -> EntityDescription?
    {
        guard let identifier else { return nil }
        return entities.first {
            !matched.contains($0.name) && ($0.name == identifier || $0.renamingIdentifier == identifier)
        }
    }

    private mutating func compareProperties(_ before: EntityDescription, _ after: EntityDescription) {
        let oldProperties = before.ownProperties
        var matched = Set<String>()
        for property in after.ownProperties {
            let name = "\(after.name).\(property.name)"
            if let same = oldProperties.first(where: { $0.name == property.name }) {
                matched.insert(same.name)
                let details = Self.differences(same, property)
                if !details.isEmpty {
                    changes.append(Change(kind: .changed, name: name, detail: details.joined(separator: ", ")))
                }
            } else if let identifier = Self.renamingIdentifier(property),
                let renamed = oldProperties.first(where: {
                    !matched.contains($0.name) && ($0.name == identifier || Self.renamingIdentifier($0) == identifier)
                })
            {
                matched.insert(renamed.name)
                var details = ["was \(renamed.name)"]
                details += Self.differences(renamed, property)
                changes.append(Change(kind: .renamed, name: name, detail: details.joined(separator: ", ")))
            } else {
                changes.append(Change(kind: .added, name: name))
            }
        }
        for property in oldProperties where !matched.contains(property.name) {
            changes.append(Change(kind: .removed, name: "\(before.name).\(property.name)"))
        }
    }

    private static func renamingIdentifier(_ property: PropertyDescription) -> String? {
        switch property {
        case .attribute(let a): a.renamingIdentifier
        case .relationship(let r): r.renamingIdentifier
        }
    }

    private static func differences(_ a: PropertyDescription, _ b: PropertyDescription) -> [String] {
        var out: [String] = []
        switch (a, b) {
        case (.attribute(let x), .attribute(let y)):
            if x.type != y.type { out.append("type \(x.type.xcodeName) → \(y.type.xcodeName)") }
            if x.isOptional != y.isOptional { out.append(y.isOptional ? "now optional" : "now required") }
            if x.isTransient != y.isTransient { out.append(y.isTransient ? "now transient" : "now stored") }
            if x.defaultValue != y.defaultValue {
                out.append("default \(x.defaultValue.displayText) → \(y.defaultValue.displayText)")
            }
            if x.validation != y.validation { out.append("validation rules") }
            if x.versionHashModifier != y.versionHashModifier { out.append("version hash modifier") }
            if x.elements != y.elements { out.append("composite elements") }
        case (.relationship(let x), .relationship(let y)):
            if x.destinationEntityName != y.destinationEntityName {
                out.append("destination \(x.destinationEntityName) → \(y.destinationEntityName)")
            }
            if x.inverseName != y.inverseName {
                out.append("inverse \(x.inverseName ?? "none") → \(y.inverseName ?? "none")")
            }
            if x.isToMany != y.isToMany { out.append(y.isToMany ? "now to-many" : "now to-one") }
            if x.isOrdered != y.isOrdered { out.append(y.isOrdered ? "now ordered" : "now unordered") }
            if x.isOptional != y.isOptional { out.append(y.isOptional ? "now optional" : "now required") }
            if x.minCount != y.minCount || x.maxCount != y.maxCount {
                out.append("count \(x.minCount)…\(x.maxCount) → \(y.minCount)…\(y.maxCount)")
            }
            if x.deleteRule != y.deleteRule {
                out.append("delete rule \(x.deleteRule.xcodeName) → \(y.deleteRule.xcodeName)")
            }
            if x.isTransient != y.isTransient { out.append(y.isTransient ? "now transient" : "now stored") }
        default:
            out.append(b.attribute != nil ? "relationship → attribute" : "attribute → relationship")
        }
        return out
    }

    /// The diff for people.
    public var lines: [String] {
        var out = changes.map(\.description)
        if changes.isEmpty { out.append("no differences") }
        out.append(
            needsMigration
                ? "migration needed: version hash \(oldVersionHash.prefix(12)) → \(newVersionHash.prefix(12))"
                : "no migration needed: the version hashes are equal")
        if needsMigration {
            if isLightweight {
                out.append("lightweight: Strata (and Core Data) can infer the mapping; no mapping model is needed")
            } else {
                out.append("not lightweight: a mapping model is needed for these changes:")
                out += changesNeedingMappingModel.map { "  \($0)" }
            }
        }
        return out
    }

    /// The `model diff --json` document.
    public var json: JSONValue {
        .object([
            ("needsMigration", .bool(needsMigration)), ("oldVersionHash", .string(oldVersionHash)),
            ("newVersionHash", .string(newVersionHash)), ("lightweight", .bool(isLightweight)),
            ("changesNeedingMappingModel", .array(changesNeedingMappingModel.map(JSONValue.string))),
            (
                "changes",
                .array(
                    changes.map {
                        .object([
                            ("kind", .string($0.kind.rawValue)), ("name", .string($0.name)),
                            ("detail", .optional($0.detail)),
                        ])
                    })
            ),
        ])
    }
}
