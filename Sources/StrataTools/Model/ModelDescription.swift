import Foundation
import Strata

/// A model as `strata model show` prints it: entities with attributes and relationships,
/// configurations, the version hash, and the warnings its file gave
/// (``ManagedObjectModel/loadWarnings``).
public enum ModelDescription {
    /// The `model show --json` document (docs/formats/json.md).
    public static func json(_ model: ManagedObjectModel) -> JSONValue {
        .object([
            ("versionHash", .string(model.versionHash.hexString)),
            ("entities", .array(model.entities.map(entity))),
            (
                "configurations",
                .object(
                    model.configurations.sorted { $0.key < $1.key }.map {
                        ($0.key, .array($0.value.map(JSONValue.string)))
                    })
            ),
            (
                "fetchRequestTemplates",
                .object(
                    model.fetchRequestTemplates.sorted { $0.key < $1.key }.map { name, template in
                        (
                            name,
                            .object([
                                ("entity", .string(template.entityName)),
                                ("predicate", .string(template.predicateFormat)),
                            ])
                        )
                    })
            ),
            ("warnings", .array(model.loadWarnings.map(warning))),
        ])
    }

    static func warning(_ warning: ModelWarning) -> JSONValue {
        .object([
            ("file", .optional(warning.file)), ("line", warning.line.map { .int($0) } ?? .null),
            ("element", .optional(warning.element)), ("message", .string(warning.message)),
        ])
    }

    static func entity(_ entity: EntityDescription) -> JSONValue {
        .object([
            ("name", .string(entity.name)), ("parent", .optional(entity.superentityName)),
            ("abstract", .bool(entity.isAbstract)),
            ("versionHash", .string(entity.versionHash.hexString)),
            ("attributes", .array(entity.ownProperties.compactMap(\.attribute).map(attribute))),
            (
                "relationships",
                .array(
                    entity.ownProperties.compactMap(\.relationship).map { r in
                        .object([
                            ("name", .string(r.name)), ("destination", .string(r.destinationEntityName)),
                            ("inverse", .optional(r.inverseName)),
                            ("toMany", .bool(r.isToMany)), ("ordered", .bool(r.isOrdered)),
                            ("optional", .bool(r.isOptional)),
                            ("minCount", .int(r.minCount)), ("maxCount", .int(r.maxCount)),
                            ("deleteRule", .string(r.deleteRule.xcodeName)),
                        ])
                    })
            ),
            ("uniquenessConstraints", .array(entity.uniquenessConstraints.map { .array($0.map(JSONValue.string)) })),
        ])
    }

    /// An attribute; a composite adds `composite` (its model-level name) and `elements`.
    static func attribute(_ a: AttributeDescription) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("name", .string(a.name)), ("type", .string(a.type.xcodeName)), ("optional", .bool(a.isOptional)),
            ("transient", .bool(a.isTransient)),
            ("defaultValue", a.defaultValue.isNull ? .null : InterchangeValue.json(a.defaultValue)),
        ]
        if a.isComposite {
            members.append(("composite", .optional(a.compositeName)))
            members.append(("elements", .array(a.elements.map(attribute))))
        }
        return .object(members)
    }

    /// An attribute's lines for people: a composite's elements follow it, indented.
    static func attributeLines(_ a: AttributeDescription, indent: String) -> [String] {
        var flags: [String] = [a.isOptional ? "optional" : "required"]
        if a.isTransient { flags.append("transient") }
        if !a.defaultValue.isNull { flags.append("default \(a.defaultValue.displayText)") }
        let type = a.isComposite ? "Composite" + (a.compositeName.map { " \($0)" } ?? "") : a.type.xcodeName
        return ["\(indent)\(a.name): \(type) (\(flags.joined(separator: ", ")))"]
            + a.elements.flatMap { attributeLines($0, indent: indent + "  ") }
    }

    /// The model for people.
    public static func lines(_ model: ManagedObjectModel) -> [String] {
        var out = ["Model \(model.versionHash.hexString) (\(model.entities.count) entities)", ""]
        for entity in model.entities {
            var head = "entity \(entity.name)"
            if let parent = entity.superentityName { head += " : \(parent)" }
            if entity.isAbstract { head += " (abstract)" }
            out.append(head)
            for property in entity.ownProperties {
                switch property {
                case .attribute(let a):
                    out += attributeLines(a, indent: "  ")
                case .relationship(let r):
                    let kind = r.isToMany ? (r.isOrdered ? "ordered to-many" : "to-many") : "to-one"
                    out.append(
                        "  \(r.name) -> \(r.destinationEntityName) (\(kind), inverse \(r.inverseName ?? "none"), delete rule \(r.deleteRule.xcodeName))"
                    )
                }
            }
            for constraint in entity.uniquenessConstraints {
                out.append("  unique (\(constraint.joined(separator: ", ")))")
            }
        }
        if !model.configurations.isEmpty {
            out.append("")
            for (name, members) in model.configurations.sorted(by: { $0.key < $1.key }) {
                out.append("configuration \(name): \(members.joined(separator: ", "))")
            }
        }
        if !model.loadWarnings.isEmpty {
            out.append("")
            out.append("warnings (\(model.loadWarnings.count)):")
            for warning in model.loadWarnings { out.append("  \(warning)") }
        }
        return out
    }
}
