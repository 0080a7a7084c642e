/// A row seen through the predicate evaluator: key paths walk through references by looking rows
/// up with a closure (the atomic engine's table, or the coordinator's row cache and driver).
public struct RowView: PredicateEvaluable {
    /// The row.
    public let row: RowSnapshot
    /// The row's entity.
    public let entity: EntityDescription
    let model: ManagedObjectModel
    let lookup: (RowID) throws -> RowSnapshot?
    let related: (RowID, Int) throws -> [RowID]

    /// Creates a view.
    ///
    /// - Parameters:
    ///   - row: The row.
    ///   - model: The model the row belongs to.
    ///   - lookup: Returns the row of an ID (for to-one and to-many steps), or `nil` when it is gone.
    ///   - related: Returns the members of an ``StoreValue/unfetched`` to-many slot.
    public init(
        _ row: RowSnapshot, model: ManagedObjectModel, lookup: @escaping (RowID) throws -> RowSnapshot?,
        related: @escaping (RowID, Int) throws -> [RowID] = { _, _ in [] }
    ) {
        self.row = row
        // Every row's entity number comes from this model.
        self.entity = model.entity(number: row.id.entity)!
        self.model = model
        self.lookup = lookup
        self.related = related
    }

    public var selfValue: StoreValue { .reference(row.id) }

    public func keyValue(forKey key: String) throws -> KeyValue {
        guard let slot = entity.index(ofProperty: key) else {
            guard let composite = entity.compositesByKeyPath[key] else {
                throw FetchPredicateError.unknownKey(key, entity: entity.name)
            }
            return CompositeElementValues.keyValue(composite, of: self) { row.values[$0] }
        }
        switch row.values[slot] {
        case .reference(let id):
            guard let target = try lookup(id) else { return .value(.null) }
            return .object(view(target))
        case .references(let ids):
            return .objects(try ids.compactMap { try lookup($0) }.map(view))
        case .unfetched:
            return .objects(try related(row.id, slot).compactMap { try lookup($0) }.map(view))
        case let value:
            return .value(value)
        }
    }

    private func view(_ other: RowSnapshot) -> RowView {
        RowView(other, model: model, lookup: lookup, related: related)
    }
}
