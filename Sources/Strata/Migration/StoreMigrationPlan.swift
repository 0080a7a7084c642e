import Foundation

/// A migration that works on rows, not objects: for each destination entity, the source entity
/// its rows come from and, slot by slot, where each value comes from and how it converts.
///
/// The core builds a plan from a mapping model whose mappings are all of the shapes inference
/// makes (``compile(_:sourceModel:destinationModel:)``) and runs it by copying rows through the
/// driver protocol; a driver may run it in place instead (``StoreDriver/migrateInPlace(_:)``).
/// Primary keys are kept: a row of source entity `S` becomes the row of `S`'s destination entity
/// with the same key, and references translate by entity number (``destinationID(of:)``).
///
/// Thread safety: a value; `Sendable`.
public struct StoreMigrationPlan: Sendable {
    /// The model the store was written with.
    public let sourceModel: ManagedObjectModel
    /// The model the store is migrated to.
    public let destinationModel: ManagedObjectModel
    /// The mapping the plan was compiled from.
    public let mappingModel: MappingModel
    /// One entry per source entity whose rows are carried over, in source entity order.
    public let entities: [EntityPlan]
    /// Source entities whose rows are not carried over.
    public let droppedEntities: [EntityDescription]
    /// Destination entities that start empty.
    public let addedEntities: [EntityDescription]
    /// Uniqueness constraints of the destination that existing rows may break: new ones, and
    /// ones whose entity or properties changed.
    public let constraintsToCheck: [ConstraintCheck]
    /// The metadata the migrated store gets (set by the core before a driver sees the plan).
    public var metadata: StoreMetadata

    /// How the rows of one source entity become rows of one destination entity.
    public struct EntityPlan: Sendable {
        /// The source entity (its own rows, not its subentities').
        public let source: EntityDescription
        /// The destination entity.
        public let destination: EntityDescription
        /// One entry per slot of ``destination``'s properties.
        public let slots: [SlotSource]

        /// Whether every destination slot is the source slot of the same position, unconverted,
        /// with no default (a copy of identical rows, entity numbers aside).
        public var isIdentity: Bool {
            slots.count == source.properties.count
                && slots.enumerated().allSatisfy { index, slot in
                    switch slot {
                    case .attribute(let from, .none, nil), .toOne(let from), .toMany(let from, false): from == index
                    case .null: source.properties[index].isTransient
                    default: false
                    }
                }
        }
    }

    /// Where one destination slot's value comes from.
    public enum SlotSource: Sendable, Hashable {
        /// Nothing: `nil` (a transient slot, or a property without a mapping or default).
        case null
        /// The same value for every row: a new attribute's default, or an empty to-many.
        case constant(StoreValue)
        /// A source attribute's value, converted; `defaultValue` replaces a `nil`.
        case attribute(slot: Int, conversion: ValueConversion, defaultValue: StoreValue?)
        /// A source to-one relationship's destination.
        case toOne(slot: Int)
        /// A source to-many relationship's destinations, or (`fromToOne`) a source to-one's
        /// destination as a one-member list.
        case toMany(slot: Int, fromToOne: Bool)
    }

    /// How an attribute value converts between types (inference's numeric and Boolean changes).
    public enum ValueConversion: Sendable, Hashable {
        /// Unchanged.
        case none
        /// To an integer of the given type: fractions cut toward zero, a value out of range
        /// refused, `true`/`false` as 1/0.
        case integer(AttributeType)
        /// To a Double.
        case double
        /// To a Float (rounded to Float precision, kept as a Double).
        case float
        /// To a Decimal.
        case decimal
        /// To a Boolean: zero is false, any other number true.
        case boolean
    }

    /// A uniqueness constraint to check over the migrated rows.
    public struct ConstraintCheck: Sendable, Hashable {
        /// The destination entity declaring it (rows of its subentities count too).
        public let entity: String
        /// The constrained properties.
        public let properties: [String]
    }

    /// The destination ID of a source row's ID: the same key, the destination entity's number;
    /// `nil` when the row's entity is not carried over.
    public func destinationID(of id: RowID) -> RowID? {
        guard let number = entityNumbers[id.entity] else { return nil }
        return RowID(entity: number, primaryKey: id.primaryKey)
    }

    /// The plan of the source entity numbered `number`, or `nil`.
    public func entityPlan(forSource number: Int32) -> EntityPlan? { planIndex[number].map { entities[$0] } }

    /// Source entity number → destination entity number.
    let entityNumbers: [Int32: Int32]
    private let planIndex: [Int32: Int]

    init(
        sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel, mappingModel: MappingModel,
        entities: [EntityPlan], droppedEntities: [EntityDescription], addedEntities: [EntityDescription],
        constraintsToCheck: [ConstraintCheck], metadata: StoreMetadata
    ) {
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
        self.mappingModel = mappingModel
        self.entities = entities
        self.droppedEntities = droppedEntities
        self.addedEntities = addedEntities
        self.constraintsToCheck = constraintsToCheck
        self.metadata = metadata
        var numbers: [Int32: Int32] = [:]
        var index: [Int32: Int] = [:]
        for (position, plan) in entities.enumerated() {
            numbers[plan.source.entityNumber] = plan.destination.entityNumber
            index[plan.source.entityNumber] = position
        }
        self.entityNumbers = numbers
        self.planIndex = index
    }

    /// Whether every carried-over entity keeps its number and its place in its hierarchy (its
    /// parent's rows go to its destination's parent): rows stay in their tables and `Z_ENT`s.
    public var keepsEntityNumbers: Bool {
        entities.allSatisfy { plan in
            guard plan.source.entityNumber == plan.destination.entityNumber else { return false }
            let sourceParent = plan.source.superentityName.flatMap { sourceModel.entity(named: $0) }
            let destinationParent = plan.destination.superentityName.flatMap { destinationModel.entity(named: $0) }
            switch (sourceParent, destinationParent) {
            case (nil, nil): return true
            case (let a?, let b?): return entityNumbers[a.entityNumber] == b.entityNumber
            default: return false
            }
        }
    }

    /// The destination row of a source row.
    ///
    /// - Throws: ``MigrationError`` `.valueConversion` for a value that does not fit its new type,
    ///   `.validation` for a required attribute left without a value.
    public func transform(_ row: RowSnapshot, with plan: EntityPlan) throws -> RowSnapshot {
        var values: [StoreValue] = []
        values.reserveCapacity(plan.slots.count)
        for (index, slot) in plan.slots.enumerated() {
            let value: StoreValue
            switch slot {
            case .null: value = .null
            case .constant(let constant): value = constant
            case .attribute(let from, let conversion, let fallback):
                let stored = from < row.values.count ? row.values[from] : .null
                value =
                    stored.isNull
                    ? (fallback ?? .null) : try convert(stored, conversion, row: row, plan: plan, slot: index)
            case .toOne(let from):
                if case .reference(let id)? = from < row.values.count ? row.values[from] : nil,
                    let mapped = destinationID(of: id)
                {
                    value = .reference(mapped)
                } else {
                    value = .null
                }
            case .toMany(let from, let fromToOne):
                let stored = from < row.values.count ? row.values[from] : .null
                switch stored {
                case .reference(let id) where fromToOne: value = .references(destinationID(of: id).map { [$0] } ?? [])
                case .references(let ids): value = .references(ids.compactMap { destinationID(of: $0) })
                case .unfetched: value = .unfetched
                default: value = .references([])
                }
            }
            values.append(value)
        }
        for (index, property) in plan.destination.properties.enumerated() {
            guard case .attribute(let attribute) = property, !attribute.isOptional, !attribute.isTransient,
                values[index].isNull
            else { continue }
            throw MigrationError(
                .validation,
                "\(plan.destination.name).\(attribute.name) is required in the new model, but the row \(plan.source.name) \(row.id.primaryKey) has no value for it and the attribute has no default; give it a default value, make it optional, or fill it in a custom migration stage"
            )
        }
        return RowSnapshot(
            id: RowID(entity: plan.destination.entityNumber, primaryKey: row.id.primaryKey), version: row.version,
            values: values)
    }

    private func convert(
        _ value: StoreValue, _ conversion: ValueConversion, row: RowSnapshot, plan: EntityPlan, slot: Int
    ) throws
        -> StoreValue
    {
        func refuse(_ why: String) -> MigrationError {
            MigrationError(
                .valueConversion,
                "\(plan.destination.name).\(plan.destination.properties[slot].name) of row \(plan.source.name) \(row.id.primaryKey): \(why); change the value before migrating, or map it with a custom migration stage"
            )
        }
        switch conversion {
        case .none: return value
        case .integer(let type):
            let integer: Int64
            switch value {
            case .integer(let n): integer = n
            case .bool(let b): integer = b ? 1 : 0
            case .double(let d):
                guard d.isFinite, let cut = Int64(exactly: d.rounded(.towardZero)) else {
                    throw refuse("\(d) is not a whole number in range")
                }
                integer = cut
            case .decimal(let d):
                var value = d
                var cut = Decimal()
                NSDecimalRound(&cut, &value, 0, d < 0 ? .up : .down)
                guard let n = Int64(exactly: NSDecimalNumber(decimal: cut).doubleValue) ?? Int64(cut.description) else {
                    throw refuse("\(d) does not fit a 64-bit integer")
                }
                integer = n
            default: return value
            }
            guard type.fits(integer) else { throw refuse("\(integer) does not fit \(type.xcodeName)") }
            return .integer(integer)
        case .double, .float:
            let double: Double
            switch value {
            case .integer(let n): double = Double(n)
            case .bool(let b): double = b ? 1 : 0
            case .double(let d): double = d
            case .decimal(let d): double = NSDecimalNumber(decimal: d).doubleValue
            default: return value
            }
            return .double(conversion == .float ? Double(Float(double)) : double)
        case .decimal:
            switch value {
            case .integer(let n): return .decimal(Decimal(n))
            case .bool(let b): return .decimal(b ? 1 : 0)
            case .double(let d):
                guard d.isFinite else { throw refuse("\(d) is not a decimal number") }
                return .decimal(Decimal(d))
            default: return value
            }
        case .boolean:
            switch value {
            case .integer(let n): return .bool(n != 0)
            case .double(let d): return .bool(d != 0)
            case .decimal(let d): return .bool(d != 0)
            default: return value
            }
        }
    }
}
