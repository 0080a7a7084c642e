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
/// The rows are read in batches (``StoreDriver/scanRows(_:_:)``); the targets of each batch's
/// relationships are read by ID (``StoreDriver/rows(for:)``), in batches too, to see that they
/// exist and point back. Time: O(rows + relationship edges). Memory: one batch of rows and its
/// targets, the problems found, and for entities with uniqueness constraints one entry per row
/// (its constrained values).
public enum StoreValidator {
    /// Validates the store at `location` and returns every problem (empty when clean).
    ///
    /// - Parameter batchSize: Rows read at a time (and targets looked up at a time).
    /// - Throws: ``ToolError`` when the store or model cannot be opened.
    public static func validate(_ location: StoreLocation, modelPath: String? = nil, batchSize: Int = 1_000) throws
        -> [StoreProblem]
    {
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
        let uuid = metadata.uuid
        var check = RowChecker(model: model, driver: driver, batchSize: max(1, batchSize)) { id in
            "x-coredata://\(uuid)/\(model.entity(number: id.entity)?.name ?? "#\(id.entity)")/p\(id.primaryKey)"
        }
        let stream = RowStream(driver: driver, batchSize: max(1, batchSize))
        for entity in model.entities {
            try StoreConverter.read(location) {
                try stream.forEachBatch(of: entity) { rows in
                    try check.batch(rows, of: entity, into: &problems)
                }
            }
        }
        // Inverse mismatches come last, in source, relationship and target order.
        return problems
            + check.mismatches.sorted { ($0.source, $0.name, $0.target) < ($1.source, $1.name, $1.target) }.map {
                check.inverseProblem($0)
            }
    }
}

/// The checks of one batch of rows, with what must outlive the batch (uniqueness entries, inverse
/// mismatches).
private struct RowChecker {
    let model: ManagedObjectModel
    let driver: any StoreDriver
    let batchSize: Int
    let uri: (RowID) -> String
    /// Constrained values already seen, per hierarchy and constraint.
    var unique: [String: [[StoreValue]: RowID]] = [:]
    /// Edges whose target exists but does not point back through the inverse.
    var mismatches: [(source: RowID, name: String, target: RowID, inverse: String)] = []
    /// The members of the batch's targets' long to-many inverses, as sets (cleared per batch).
    private var memberSets: [RowID: [String: Set<RowID>]] = [:]

    init(model: ManagedObjectModel, driver: any StoreDriver, batchSize: Int, uri: @escaping (RowID) -> String) {
        self.model = model
        self.driver = driver
        self.batchSize = batchSize
        self.uri = uri
    }

    func inverseProblem(_ edge: (source: RowID, name: String, target: RowID, inverse: String)) -> StoreProblem {
        StoreProblem(
            kind: .inverseMismatch, object: uri(edge.source), property: edge.name,
            message: "points at \(uri(edge.target)), whose '\(edge.inverse)' does not point back")
    }

    /// The rows of `ids` that exist, by ID, to-many slots filled; read `batchSize` at a time.
    func existing(_ ids: Set<RowID>) throws -> [RowID: RowSnapshot] {
        var found: [RowID: RowSnapshot] = [:]
        let sorted = ids.sorted()
        var start = 0
        while start < sorted.count {
            let end = min(start + batchSize, sorted.count)
            var byEntity: [Int32: [RowSnapshot]] = [:]
            for row in try driver.rows(for: Array(sorted[start..<end])) {
                byEntity[row.id.entity, default: []].append(row)
            }
            for (number, rows) in byEntity {
                var rows = rows
                if let entity = model.entity(number: number) { try driver.fillToMany(&rows, of: entity) }
                for row in rows { found[row.id] = row }
            }
            start = end
        }
        return found
    }

    static func targets(_ value: StoreValue) -> [RowID] {
        switch value {
        case .reference(let id): [id]
        case .references(let ids): ids
        default: []
        }
    }

    mutating func batch(_ rows: [RowSnapshot], of entity: EntityDescription, into problems: inout [StoreProblem])
        throws
    {
        let relationshipSlots = entity.properties.indices.filter {
            !entity.properties[$0].isTransient && entity.properties[$0].relationship != nil
        }
        var wanted = Set<RowID>()
        for row in rows {
            for slot in relationshipSlots where slot < row.values.count {
                for target in Self.targets(row.values[slot]) where model.entity(number: target.entity) != nil {
                    wanted.insert(target)
                }
            }
        }
        let found = try existing(wanted)
        memberSets = [:]
        for row in rows { check(row, entity: entity, found: found, problems: &problems) }
    }

    /// Whether `target`'s relationship `inverse` holds `source`; a long to-many list becomes a set
    /// once per batch, so checking every member of a large owner costs O(members).
    private mutating func pointsBack(
        _ target: RowSnapshot, _ entity: EntityDescription, _ inverse: String, to source: RowID
    ) -> Bool {
        guard let slot = entity.index(ofProperty: inverse), slot < target.values.count else { return false }
        let members = Self.targets(target.values[slot])
        if members.count <= 16 { return members.contains(source) }
        if let set = memberSets[target.id]?[inverse] { return set.contains(source) }
        let set = Set(members)
        memberSets[target.id, default: [:]][inverse] = set
        return set.contains(source)
    }

    private mutating func check(
        _ row: RowSnapshot, entity: EntityDescription, found: [RowID: RowSnapshot], problems: inout [StoreProblem]
    ) {
        let me = uri(row.id)
        for (property, violation) in entity.attributeViolations({ $0 < row.values.count ? row.values[$0] : .null }) {
            let kind: StoreProblem.Kind = violation.code == .missingMandatoryProperty ? .required : .rule
            problems.append(.init(kind: kind, object: me, property: property, message: violation.message))
        }
        for (slot, property) in entity.properties.enumerated() where !property.isTransient {
            guard case .relationship(let relationship) = property else { continue }  // attributes checked above
            let value = slot < row.values.count ? row.values[slot] : .null
            let targets = Self.targets(value)
            let destination = model.entity(named: relationship.destinationEntityName)
            var checked = Set<RowID>()
            for target in targets {
                guard let targetEntity = model.entity(number: target.entity) else {
                    problems.append(
                        .init(
                            kind: .unknownEntity, object: me, property: relationship.name,
                            message: "points at a row of entity number \(target.entity), which the model does not have")
                    )
                    continue
                }
                guard let targetRow = found[target] else {
                    problems.append(
                        .init(
                            kind: .danglingReference, object: me, property: relationship.name,
                            message: "points at \(uri(target)), which does not exist"))
                    continue
                }
                if let destination, !targetEntity.isKind(of: destination) {
                    problems.append(
                        .init(
                            kind: .wrongDestination, object: me, property: relationship.name,
                            message:
                                "points at \(uri(target)), a \(targetEntity.name), but holds \(destination.name) objects"
                        ))
                }
                guard let inverse = relationship.inverseName, checked.insert(target).inserted else { continue }
                if !pointsBack(targetRow, targetEntity, inverse, to: row.id) {
                    mismatches.append((row.id, relationship.name, target, inverse))
                }
            }
            for message in RelationshipRules.violations(relationship, count: targets.count) {
                problems.append(.init(kind: .count, object: me, property: relationship.name, message: message))
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
