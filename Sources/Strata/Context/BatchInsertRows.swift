import Foundation

/// The rows of a batch insert, checked against the entity as they are made: handed one at a time
/// to a driver that writes them as they come (``fill(_:with:)``), or collected as row snapshots
/// whose keys the coordinator fills in when it stores them (``append(_:)``), when uniqueness
/// constraints need every row first.
///
/// Turning each object into a row is most of a batch insert's own work (the store's inserts are
/// the rest), so the common value, one already of its attribute's Swift type, is recognized by
/// comparing its type rather than by a dynamic cast (see ``exactValue(_:_:)``).
struct BatchInsertRows {
    let entity: EntityDescription
    private var rows: [RowSnapshot] = []
    /// The ID every row carries until the coordinator gives it its key.
    private let unkeyed: RowID
    /// The entity's default values, which each row starts from.
    private let defaults: [StoreValue]
    /// The entity's transient slots, cleared in every row.
    private let transientSlots: [Int]
    /// Non-optional attributes, checked on every row.
    private let required: [(slot: Int, name: String)]
    /// Each slot's attribute type when it is a stored attribute a batch insert may set, else `nil`:
    /// looked up once, so the common value (already of the attribute's Swift type) is stored
    /// without copying the attribute's description.
    private let settableTypes: [AttributeType?]
    /// The entity's derived attributes, computed for every row as a save computes them.
    private let derivations: [(slot: Int, derivation: DerivationPlan.Derivation)]
    /// An object in no context that holds each row while its derived attributes are computed
    /// (expressions read objects); made on the first row that needs it.
    private var scratch: ManagedObject?

    init(entity: EntityDescription, model: ManagedObjectModel) throws {
        if entity.isAbstract {
            throw StoreError(
                .invalidRequest,
                "a batch insert cannot insert objects of '\(entity.name)', which is abstract; insert one of its subentities"
            )
        }
        self.entity = entity
        unkeyed = RowID(entity: entity.entityNumber, primaryKey: 0)
        defaults = entity.defaultValues
        transientSlots = entity.transientSlots
        var required: [(Int, String)] = []
        for (slot, property) in entity.properties.enumerated() where !property.isTransient {
            switch property {
            case .attribute(let attribute) where !attribute.isOptional: required.append((slot, attribute.name))
            case .relationship(let relationship) where !relationship.isOptional && !relationship.isToMany:
                throw StoreError(
                    .invalidRequest,
                    "a batch insert cannot set relationships, and '\(entity.name).\(relationship.name)' is required; insert these objects through a context"
                )
            default: break
            }
        }
        self.required = required
        settableTypes = entity.properties.map { property in
            property.attribute.flatMap { $0.isTransient ? nil : $0.type }
        }
        derivations =
            model.hasDerivedAttributes
            ? try DerivationPlan(model).attributes(of: entity).compactMap { derivation in
                entity.index(ofProperty: derivation.attribute.name).map { ($0, derivation) }
            } : []
    }

    mutating func reserve(_ count: Int) { rows.reserveCapacity(count) }

    /// The rows added so far, handed over (the builder is left empty).
    mutating func take() -> [RowSnapshot] {
        defer { rows = [] }
        return rows
    }

    /// Adds one object's row (``fill(_:with:)``).
    mutating func append(_ object: BatchInsertRequest.Object) throws {
        var values = defaults
        try fill(&values, with: object)
        rows.append(RowSnapshot(id: unkeyed, version: 1, values: values))
    }

    /// Adds the row of a managed object handler's object (``fill(_:withObjectValues:changed:)``).
    mutating func append(values objectValues: [StoreValue], changed: SlotSet) throws {
        var values: [StoreValue] = []
        try fill(&values, withObjectValues: objectValues, changed: changed)
        rows.append(RowSnapshot(id: unkeyed, version: 1, values: values))
    }

    /// Sets `values` to one object's row: the defaults, then the object's values converted to
    /// their attributes. `values` may hold an earlier row (a buffer reused row after row).
    mutating func fill(_ values: inout [StoreValue], with object: BatchInsertRequest.Object) throws {
        if values.count == defaults.count {
            // In place: a reused buffer is overwritten without allocating.
            for slot in defaults.indices { values[slot] = defaults[slot] }
        } else {
            values = defaults
        }
        for (key, value) in object {
            guard let slot = entity.index(ofProperty: key) else {
                throw StoreError(
                    .invalidRequest,
                    "object \(count) of the batch insert names '\(key)', which '\(entity.name)' does not have; use the model's attribute names"
                )
            }
            guard let type = settableTypes[slot] else {
                throw StoreError(
                    .invalidRequest,
                    "object \(count) of the batch insert sets '\(entity.name).\(key)'; a batch insert sets stored attributes only"
                )
            }
            // The value's own type, opened from its existential box (see exactValue(_:_:)).
            func exactOpened<T>(_ opened: T) -> StoreValue? { Self.exactValue(opened, type) }
            if let exact = _openExistential(value, do: exactOpened) {
                values[slot] = exact
                continue
            }
            // A stored attribute: settableTypes has a type for it.
            let attribute = entity.properties[slot].attribute!
            do {
                values[slot] = try StoreValueCoercion.coerce(any: value, to: attribute, entity: entity.name)
            } catch let error as StoreError {
                throw StoreError(error.code, "object \(count) of the batch insert: \(error.message)")
            }
        }
        try finish(&values)
    }

    /// Sets `values` to the row of a managed object handler's object: its values are in slot
    /// order and were converted and checked as they were set; `changed` are the slots the
    /// handler set.
    mutating func fill(_ values: inout [StoreValue], withObjectValues objectValues: [StoreValue], changed: SlotSet)
        throws
    {
        for slot in transientSlots where changed.contains(slot) {
            throw StoreError(
                .invalidRequest,
                "object \(count) of the batch insert sets '\(entity.name).\(entity.properties[slot].name)'; a batch insert sets stored attributes only"
            )
        }
        values = objectValues
        try finish(&values)
    }

    /// The number of objects turned into rows so far (the next object's position).
    private(set) var count = 0

    /// Computes the derived attributes, checks that every non-optional attribute has a value,
    /// clears transient slots, and counts the object.
    private mutating func finish(_ values: inout [StoreValue]) throws {
        if !derivations.isEmpty { try derive(&values) }
        for (slot, name) in required where values[slot].isNull {
            throw StoreError(
                .invalidRequest,
                "object \(count) of the batch insert leaves the non-optional attribute '\(entity.name).\(name)' nil and it has no default; give it a value"
            )
        }
        for slot in transientSlots { values[slot] = .null }
        count += 1
    }

    /// Sets the row's derived attributes as a save sets an inserted object's, as Core Data's SQLite
    /// store does for batch inserts with its triggers (a value the object gave one is replaced).
    /// A batch insert sets no relationships, so a derivation through one sees none: a count or
    /// sum over a to-many is 0, a to-one's attribute `nil`.
    private mutating func derive(_ values: inout [StoreValue]) throws {
        let object = scratch ?? ManagedObject(entity: entity, insertInto: nil)
        scratch = object
        for (slot, derivation) in derivations {
            // Later derivations may read earlier ones, as on an object in a save.
            object.values = values
            do {
                values[slot] = try derivation.value(for: object)
            } catch {
                let name = "\(entity.name).\(derivation.attribute.name)"
                throw StoreError(
                    .invalidRequest,
                    "object \(count) of the batch insert: cannot compute derived attribute '\(name)' from '\(derivation.text)': \(error); fix the values it reads or its derivation expression",
                    underlying: error)
            }
        }
        object.values = []
    }

    /// The value when `value` already has the Swift type an attribute of `type` stores (and, for
    /// integers, fits its width); `nil` to take the general path, which converts or explains.
    ///
    /// The caller opens the `any Sendable` of a dictionary (`_openExistential`, the standard
    /// library's way to hand a boxed value to a generic function as its own type): comparing `T`
    /// with the expected type is one pointer comparison, where casting the existential
    /// (`value as? String`) ran the runtime's dynamic cast, about a quarter of a dictionary row's
    /// whole cost.
    @inline(__always)
    static func exactValue<T>(_ value: T, _ type: AttributeType) -> StoreValue? {
        // Each unsafeBitCast below converts a T to the type it was just found to be equal to.
        switch type {
        case .string:
            if T.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
        case .integer64:
            if T.self == Int64.self { return .integer(unsafeBitCast(value, to: Int64.self)) }
            if T.self == Int.self { return .integer(Int64(unsafeBitCast(value, to: Int.self))) }
        case .integer32:
            if T.self == Int32.self { return .integer(Int64(unsafeBitCast(value, to: Int32.self))) }
            if T.self == Int.self, let n = Int32(exactly: unsafeBitCast(value, to: Int.self)) {
                return .integer(Int64(n))
            }
        case .integer16:
            if T.self == Int16.self { return .integer(Int64(unsafeBitCast(value, to: Int16.self))) }
            if T.self == Int.self, let n = Int16(exactly: unsafeBitCast(value, to: Int.self)) {
                return .integer(Int64(n))
            }
        case .double:
            if T.self == Double.self { return .double(unsafeBitCast(value, to: Double.self)) }
        case .date:
            if T.self == Date.self { return .date(unsafeBitCast(value, to: Date.self)) }
        case .boolean:
            if T.self == Bool.self { return .bool(unsafeBitCast(value, to: Bool.self)) }
        default:
            break
        }
        return nil
    }
}
