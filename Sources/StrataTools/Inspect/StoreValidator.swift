import Foundation
import Strata

/// One integrity problem in a store.
public struct StoreProblem: Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    public enum Kind: String, Sendable, Hashable {
        case danglingReference, wrongDestination, inverseMismatch, required, rule, count, unique, unknownEntity,
            modelMismatch
    }
    /// The kind.
    public var kind: Kind
    /// The object's URI, when the problem is about one object.
    public var object: String?
    /// The property, when the problem is about one.
    public var property: String?
    /// What is wrong.
    public var message: String

    public var description: String {
        var place = object ?? "store"
        if let property { place += " \(property)" }
        return "\(place): \(message)"
    }
}

/// Checks a store's rows against its model (`strata validate`): dangling references, references
/// to the wrong entity, inverse mismatches, required values, validation rules, relationship counts,
/// unique constraints, entities unknown to the model.
///
/// Memory: every row ID and every relationship edge, plus one batch of rows.
public enum StoreValidator {
    /// Validates the store at `location` and returns every problem (empty when clean).
    ///
    /// - Throws: ``ToolError`` when the store or model cannot be opened.
    public static func validate(_ location: StoreLocation, modelPath: String? = nil) throws -> [StoreProblem] {
        let resolved = try StoreOpener.resolveModel(at: location, modelPath: modelPath)
        let model = resolved.model
        let driver = try StoreOpener.openDriver(
            location, model: model, configuration: resolved.configuration, readOnly: true)
        defer { try? driver.close() }
        let metadata = try StoreConverter.read(location) { try driver.loadMetadata() }
        var problems: [StoreProblem] = []
        for (name, hash) in metadata.entityVersionHashes.sorted(by: { $0.key < $1.key }) {
            guard let entity = model.entity(named: name) else {
                problems.append(
                    .init(
                        kind: .unknownEntity,
                        message: "the store records entity '\(name)', which the model does not have"))
                continue
            }
            if entity.versionHash != hash {
                problems.append(
                    .init(
                        kind: .modelMismatch,
                        message: "entity '\(name)' was written with a different version of the model"))
            }
        }
        let stream = RowStream(driver: driver)
        var existing = Set<RowID>()
        for entity in model.entities {
            existing.formUnion(try StoreConverter.read(location) { try stream.ids(of: entity) })
        }
        let uuid = metadata.uuid
        func uri(_ id: RowID) -> String {
            "x-coredata://\(uuid)/\(model.entity(number: id.entity)?.name ?? "#\(id.entity)")/p\(id.primaryKey)"
        }
        var links: [RowID: [String: Set<RowID>]] = [:]
        var unique: [String: [[StoreValue]: RowID]] = [:]
        for entity in model.entities {
            try StoreConverter.read(location) {
                try stream.forEachBatch(of: entity) { rows in
                    for row in rows {
                        check(
                            row, entity: entity, model: model, existing: existing, uri: uri, links: &links,
                            unique: &unique, problems: &problems)
                    }
                }
            }
        }
        // Inverses: every edge A -r-> B needs B -inverse-> A.
        for (source, relationships) in links.sorted(by: { $0.key < $1.key }) {
            guard let entity = model.entity(number: source.entity) else { continue }
            for (name, targets) in relationships.sorted(by: { $0.key < $1.key }) {
                guard let inverse = entity.property(named: name)?.relationship?.inverseName else { continue }
                for target in targets.sorted() where existing.contains(target) {
                    if links[target]?[inverse]?.contains(source) != true {
                        problems.append(
                            .init(
                                kind: .inverseMismatch, object: uri(source), property: name,
                                message: "points at \(uri(target)), whose '\(inverse)' does not point back"))
                    }
                }
            }
        }
        return problems
    }

    private static func check(
        _ row: RowSnapshot, entity: EntityDescription, model: ManagedObjectModel, existing: Set<RowID>,
        uri: (RowID) -> String, links: inout [RowID: [String: Set<RowID>]],
        unique: inout [String: [[StoreValue]: RowID]],
        problems: inout [StoreProblem]
    ) {
        let me = uri(row.id)
        for (property, violation) in entity.attributeViolations({ $0 < row.values.count ? row.values[$0] : .null }) {
            let kind: StoreProblem.Kind = violation.code == .missingMandatoryProperty ? .required : .rule
            problems.append(.init(kind: kind, object: me, property: property, message: violation.message))
        }
        for (slot, property) in entity.properties.enumerated() where !property.isTransient {
            let value = slot < row.values.count ? row.values[slot] : .null
            switch property {
            case .attribute: continue  // checked above
            case .relationship(let relationship):
                let targets: [RowID]
                switch value {
                case .reference(let id): targets = [id]
                case .references(let ids): targets = ids
                default: targets = []
                }
                let destination = model.entity(named: relationship.destinationEntityName)
                for target in targets {
                    guard let targetEntity = model.entity(number: target.entity) else {
                        problems.append(
                            .init(
                                kind: .unknownEntity, object: me, property: relationship.name,
                                message:
                                    "points at a row of entity number \(target.entity), which the model does not have"))
                        continue
                    }
                    if !existing.contains(target) {
                        problems.append(
                            .init(
                                kind: .danglingReference, object: me, property: relationship.name,
                                message: "points at \(uri(target)), which does not exist"))
                    } else if let destination, !targetEntity.isKind(of: destination) {
                        problems.append(
                            .init(
                                kind: .wrongDestination, object: me, property: relationship.name,
                                message:
                                    "points at \(uri(target)), a \(targetEntity.name), but holds \(destination.name) objects"
                            ))
                    }
                }
                if !targets.isEmpty { links[row.id, default: [:]][relationship.name] = Set(targets) }
                for message in RelationshipRules.violations(relationship, count: targets.count) {
                    problems.append(.init(kind: .count, object: me, property: relationship.name, message: message))
                }
            }
        }
        for constraint in entity.uniquenessConstraints {
            let values = constraint.map { name in entity.index(ofProperty: name).map { row.values[$0] } ?? .null }
            if values.contains(where: \.isNull) { continue }
            let key = "\(entity.rootEntityName):\(constraint.joined(separator: ","))"
            if let other = unique[key]?[values] {
                problems.append(
                    .init(
                        kind: .unique, object: me, property: constraint.joined(separator: ","),
                        message:
                            "unique constraint (\(constraint.joined(separator: ", "))) violated: \(values.map(\.displayText).joined(separator: ", ")) is also used by \(uri(other))"
                    ))
            } else {
                unique[key, default: [:]][values] = row.id
            }
        }
    }
}
