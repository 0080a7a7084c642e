import Foundation

/// A change a store makes to every matching row at once, without objects: the driver side of
/// ``BatchUpdateRequest`` and ``BatchDeleteRequest`` (Core Data's `NSBatchUpdateRequest` and
/// `NSBatchDeleteRequest`).
///
/// ## Rules every driver keeps (``StoreDriver/execute(_:)``)
/// - One transaction: when it throws, the store holds exactly what it held before.
/// - Matching is the in-memory evaluator's (``FetchPredicate/evaluate(with:substitutionVariables:)``).
/// - An update evaluates each expression on the row as it was before the request, converts the
///   value to the attribute's type with ``StoreValueCoercion/coerce(_:to:entity:)``, refuses `nil`
///   for a non-optional attribute, adds 1 to the row's version and keeps indexes and unique
///   constraints (a violation is ``StoreError/Code/constraint`` and nothing changes).
/// - Deletes are only for hierarchies no relationship touches (``check()``): with no object
///   graph there is no one to run delete rules. ``ManagedObjectContext/execute(_:)-(BatchDeleteRequest)``
///   deletes such entities through objects instead.
/// - Validation rules of the model other than type, optionality and uniqueness are not run,
///   as in Core Data.
public struct StoreBatchRequest: Sendable {
    /// What happens to each matching row.
    public enum Action: Sendable {
        /// Sets attribute slots to the values of expressions, evaluated on each row.
        case update([Assignment])
        /// Removes the rows.
        case delete
    }

    /// One attribute set by a batch update.
    public struct Assignment: Sendable, Hashable {
        /// The attribute's slot in ``EntityDescription/properties``.
        public var slot: Int
        /// The new value: a constant or an expression of the row (`score + 1`).
        public var expression: FetchExpression

        /// Creates an assignment.
        public init(slot: Int, expression: FetchExpression) {
            self.slot = slot
            self.expression = expression
        }
    }

    /// The model the entity belongs to (for checks, and for expressions or predicates that walk
    /// relationships).
    public var model: ManagedObjectModel
    /// The entity changed.
    public var entity: EntityDescription
    /// Whether rows of subentities are changed too.
    public var includesSubentities: Bool = true
    /// Which rows change; `nil` for all.
    public var predicate: FetchPredicate?
    /// What happens to them.
    public var action: Action

    /// Creates a request.
    public init(model: ManagedObjectModel, entity: EntityDescription, predicate: FetchPredicate? = nil, action: Action)
    {
        self.model = model
        self.entity = entity
        self.predicate = predicate
        self.action = action
    }

    /// The entity numbers the request covers.
    public var entityNumbers: Set<Int32> {
        includesSubentities ? entity.hierarchyNumbers : [entity.entityNumber]
    }

    /// The fetch that finds the matching rows.
    public var fetch: StoreFetch {
        var fetch = StoreFetch(entity: entity)
        fetch.includesSubentities = includesSubentities
        fetch.predicate = predicate
        return fetch
    }

    /// Whether a batch delete of this request's rows could leave a relationship naming a deleted
    /// row: true when any relationship of the model starts or ends in the entity's hierarchy.
    public var touchesRelationships: Bool {
        let hierarchy = model.entity(number: entity.rootEntityNumber)?.hierarchyNumbers ?? entity.hierarchyNumbers
        for other in model.entities {
            for relationship in other.relationships {
                if hierarchy.contains(other.entityNumber) { return true }
                if let destination = model.entity(named: relationship.destinationEntityName),
                    hierarchy.contains(destination.entityNumber)
                {
                    return true
                }
            }
        }
        return false
    }

    /// Checks the request against the model before a driver runs it.
    ///
    /// - Throws: ``StoreError/Code/invalidRequest`` for an update with no assignments, or one
    ///   naming a slot that is not a stored attribute; ``StoreError/Code/unsupported`` for a delete
    ///   of a hierarchy a relationship touches. Each error names the entity and property.
    public func check() throws {
        switch action {
        case .delete:
            if touchesRelationships {
                throw StoreError(
                    .unsupported,
                    "a batch delete of '\(entity.name)' would leave relationships naming deleted rows; delete those objects through a context so their delete rules run"
                )
            }
        case .update(let assignments):
            guard !assignments.isEmpty else {
                throw StoreError(.invalidRequest, "a batch update of '\(entity.name)' sets no properties")
            }
            for assignment in assignments {
                guard assignment.slot >= 0, assignment.slot < entity.properties.count else {
                    throw StoreError(
                        .invalidRequest,
                        "a batch update of '\(entity.name)' names slot \(assignment.slot), which it does not have")
                }
                let property = entity.properties[assignment.slot]
                guard let attribute = property.attribute, !attribute.isTransient else {
                    throw StoreError(
                        .invalidRequest,
                        "a batch update can set stored attributes only; '\(entity.name).\(property.name)' is not one")
                }
            }
        }
    }
}

/// What a driver reports after a ``StoreBatchRequest``.
public struct StoreBatchResult: Sendable {
    /// The rows updated or deleted, in ascending order.
    public var ids: [RowID]

    /// Creates a result.
    public init(ids: [RowID]) { self.ids = ids }
}

/// The assignments of a batch update, prepared for one request: each expression compiled for the
/// row's slots where it can be (``CompiledRowExpression``), each attribute looked up once.
///
/// Drivers use it to compute a row's new values; the answers match evaluating the expressions on
/// a ``RowView`` and converting them with ``StoreValueCoercion``.
public struct BatchUpdatePlan {
    private struct Step {
        var slot: Int
        var type: AttributeType
        var attribute: AttributeDescription
        var expression: FetchExpression
        var compiled: CompiledRowExpression?
    }

    private let steps: [Step]
    private let entityName: String
    /// The assigned slots, ascending.
    public let changedSlots: [Int]
    /// Whether every expression reads only the row's own attributes (no ``RowView`` needed).
    public let isCompiled: Bool
    /// The slots the expressions read (meaningful when ``isCompiled``).
    public let readSlots: [Int]

    /// Prepares the assignments of `request` (an update).
    ///
    /// - Throws: what ``StoreBatchRequest/check()`` throws.
    public init(_ request: StoreBatchRequest) throws {
        try request.check()
        guard case .update(let assignments) = request.action else {
            throw StoreError(.invalidRequest, "a batch delete of '\(request.entity.name)' has no assignments")
        }
        var steps: [Step] = []
        for assignment in assignments.sorted(by: { $0.slot < $1.slot }) {
            // check() accepted only attribute slots.
            let attribute = request.entity.properties[assignment.slot].attribute!
            let compiled = CompiledRowExpression(assignment.expression, entity: request.entity)
            if let last = steps.last, last.slot == assignment.slot {
                throw StoreError(
                    .invalidRequest, "a batch update of '\(request.entity.name)' sets '\(attribute.name)' twice")
            }
            steps.append(
                Step(
                    slot: assignment.slot, type: attribute.type, attribute: attribute,
                    expression: assignment.expression, compiled: compiled))
        }
        self.steps = steps
        entityName = request.entity.name
        changedSlots = steps.map(\.slot)
        isCompiled = steps.allSatisfy { $0.compiled != nil }
        readSlots = Array(Set(steps.flatMap { $0.compiled?.readSlots ?? [] })).sorted()
    }

    /// The new values of ``changedSlots`` for a row with `values`, in the same order.
    ///
    /// - Parameter view: The row seen through the evaluator, for expressions that did not compile.
    /// - Throws: ``StoreError/Code/invalidRequest`` naming the entity and attribute when a value
    ///   does not evaluate, does not fit the attribute's type, or is `nil` for a non-optional one.
    public func newValues(for values: [StoreValue], view: () -> RowView?) throws -> [StoreValue] {
        var result: [StoreValue] = []
        result.reserveCapacity(steps.count)
        for index in steps.indices {
            let raw: StoreValue
            do {
                if let compiled = steps[index].compiled {
                    raw = try compiled.value(values)
                } else if let view = view() {
                    raw = try steps[index].expression.value(with: view)
                } else {
                    throw StoreError(
                        .unsupported, "the expression reads other rows, which this driver cannot provide here")
                }
            } catch let error as FetchPredicateError {
                throw StoreError(
                    .invalidRequest, "a batch update of '\(entityName).\(steps[index].attribute.name)' failed: \(error)"
                )
            }
            if let exact = Self.exact(raw, steps[index].type) {
                result.append(exact)
                continue
            }
            let attribute = steps[index].attribute
            let value = try StoreValueCoercion.coerce(raw, to: attribute, entity: entityName)
            if value.isNull && !attribute.isOptional {
                throw StoreError(
                    .invalidRequest,
                    "a batch update sets the non-optional attribute '\(entityName).\(attribute.name)' to nil")
            }
            result.append(value)
        }
        return result
    }

    /// `value` unchanged when it already is the case `type` stores and in range (what
    /// ``StoreValueCoercion/coerce(_:to:entity:)`` would return); `nil` when coercion must decide.
    private static func exact(_ value: StoreValue, _ type: AttributeType) -> StoreValue? {
        switch (type, value) {
        case (.double, .double), (.integer64, .integer), (.string, .string), (.date, .date), (.boolean, .bool),
            (.uuid, .uuid):
            return value
        case (.integer32, .integer(let n)): return Int32(exactly: n) == nil ? nil : value
        case (.integer16, .integer(let n)): return Int16(exactly: n) == nil ? nil : value
        default: return nil
        }
    }
}

extension StoreDriver {
    /// By default a batch request runs through the driver's own primitives: one ``fetch(_:)``,
    /// the predicate finished in memory where the driver did not apply it, then one
    /// ``apply(_:)`` with a version check per row (retried when another save changed a row in
    /// between).
    public func execute(_ request: StoreBatchRequest) throws -> StoreBatchResult {
        try executeThroughRows(request)
    }

    /// The portable implementation of ``execute(_:)``, for drivers that handle only some requests
    /// themselves.
    public func executeThroughRows(_ request: StoreBatchRequest) throws -> StoreBatchResult {
        let model = request.model
        let plan: BatchUpdatePlan?
        if case .update = request.action {
            plan = try BatchUpdatePlan(request)
        } else {
            try request.check()
            plan = nil
        }
        var attempt = 0
        while true {
            let rows = try matchingRows(request, model: model)
            var batch = ChangeBatch()
            if let plan {
                batch.updates.reserveCapacity(rows.count)
                for row in rows {
                    let changed = try plan.newValues(for: row.values) { self.view(row, model: model) }
                    var values = row.values
                    for (slot, value) in zip(plan.changedSlots, changed) { values[slot] = value }
                    batch.updates.append(
                        RowUpdate(
                            id: row.id, expectedVersion: row.version, values: values, changedSlots: plan.changedSlots))
                }
            } else {
                batch.deletes = rows.map { RowDelete(id: $0.id, expectedVersion: $0.version) }
            }
            if plan != nil { try checkUniqueness(batch.updates, request) }
            do {
                if !batch.isEmpty { _ = try apply(batch) }
                return StoreBatchResult(ids: rows.map(\.id))
            } catch StoreError.Code.conflict where attempt < 3 {
                attempt += 1  // another save changed a matching row after the fetch: match again
            }
        }
    }

    /// Unique constraints of the entity and its ancestors that an update touches: the changed rows
    /// and every other row of the constraint's hierarchy must not share values (rows with a `nil`
    /// in the constraint are exempt, as in the context's validation).
    private func checkUniqueness(_ updates: [RowUpdate], _ request: StoreBatchRequest) throws {
        let model = request.model
        let changed = Set(updates.first?.changedSlots ?? [])
        var current: EntityDescription? = request.entity
        while let owner = current {
            for constraint in owner.uniquenessConstraints {
                let slots = constraint.compactMap { owner.index(ofProperty: $0) }
                guard slots.count == constraint.count, slots.contains(where: changed.contains) else { continue }
                var fetch = StoreFetch(entity: owner)
                fetch.includesSubentities = true
                var values: [RowID: [StoreValue]] = [:]
                for row in try self.fetch(fetch).rows { values[row.id] = slots.map { row.values[$0] } }
                for update in updates where values[update.id] != nil {
                    values[update.id] = slots.map { update.values[$0] }
                }
                var seen: [[StoreValue]: RowID] = [:]
                for (id, key) in values.sorted(by: { $0.key < $1.key }) where !key.contains(where: \.isNull) {
                    if let other = seen[key] {
                        throw StoreError(
                            .constraint,
                            "a batch update of '\(request.entity.name)' gives rows \(other) and \(id) the same (\(constraint.joined(separator: ", "))) of '\(owner.name)', which must be unique",
                            objectIDs: [other, id].compactMap { id in
                                model.entity(number: id.entity).map {
                                    ManagedObjectID(entity: $0, rowID: id, store: nil)
                                }
                            })
                    }
                    seen[key] = id
                }
            }
            current = owner.superentityName.flatMap { model.entity(named: $0) }
        }
    }

    private func matchingRows(_ request: StoreBatchRequest, model: ManagedObjectModel) throws -> [RowSnapshot] {
        let result = try fetch(request.fetch)
        var rows = result.rows
        if !result.appliedPredicate, let predicate = request.predicate {
            if let compiled = CompiledRowPredicate(predicate, entity: request.entity) {
                rows = try rows.filter { try compiled.matches($0.values) }
            } else {
                rows = try rows.filter { try predicate.evaluate(with: view($0, model: model)) }
            }
        }
        return rows.sorted { $0.id < $1.id }
    }

    private func view(_ row: RowSnapshot, model: ManagedObjectModel) -> RowView {
        RowView(
            row, model: model, lookup: { [self] id in try rows(for: [id]).first },
            related: { [self] id, slot in
                // Rows of this driver come from `model`, so the entity is known.
                let entity = model.entity(number: id.entity)!
                return try relatedRows(RelatedRowsRequest(entity: entity, slot: slot, sources: [id]))[id] ?? []
            })
    }
}
