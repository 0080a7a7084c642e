import Foundation

extension ManagedObject {
    /// The value of a property: attributes as Swift values (integers of every width as `Int`,
    /// Float attributes as `Float`, transformables through their transformer), to-one
    /// relationships as ``ManagedObject`` (or `nil`), to-many as `Set<ManagedObject>` and ordered
    /// to-many as `[ManagedObject]`. A composite attribute reads as `[String: Any]` keyed by
    /// element name (nested composites as nested dictionaries, `nil` elements left out), or `nil`
    /// when every element is `nil`; an element reads by its key path (`"location.latitude"`).
    /// A fetched property reads as `[ManagedObject]` (see ``fetchedObjects(forKey:)``).
    /// Fires the fault if needed.
    ///
    /// Misuse (an unknown key) stops the program with a message, as Core Data raises; use
    /// ``storeValue(forKey:)`` for a throwing variant.
    public func value(forKey key: String) -> Any? {
        guard let slot = entity.index(ofProperty: key) else {
            if let composite = entity.compositesByKeyPath[key] { return compositeValue(composite) }
            if fetchedPropertyDescription(named: key) != nil { return fetchedObjectsRecording(key) }
            // Misuse no valid program commits: asking an object for a key its entity lacks.
            preconditionFailure("\(unknownKey(key))")
        }
        checkConfinement("value(forKey: \"\(key)\")")
        fireFault()
        guard !values.isEmpty else { return nil }
        switch entity.slotKinds[slot] {
        case .attribute(let type): return Self.plainValue(values[slot], type)
        // A value its transformer cannot read back is a bad value, not a store error: it reads as
        // nil here, and storeValue(forKey:) gives the stored bytes.
        case .transformed: return try? convertOut(values[slot], slot: slot)  // safe: transformer errors only, see above
        case .toOne, .toMany:
            // Relationship slots have relationship descriptions.
            return relationshipValue(slot: slot, entity.properties[slot].relationship!)
        }
    }

    /// Sets a property, converting the Swift value to the attribute's type and keeping inverse
    /// relationships consistent. Misuse (an unknown key, a value of the wrong type) stops the
    /// program with a message; use ``setStoreValue(_:forKey:)`` or ``setConvertedValue(_:forKey:)``
    /// for data that may be bad.
    public func setValue(_ value: Any?, forKey key: String) {
        do {
            try setConvertedValue(value, forKey: key)
        } catch {
            _setterFailed(error)
        }
    }

    /// Sets a property like ``setValue(_:forKey:)`` but throws for an unknown key or a value that
    /// does not fit the attribute.
    ///
    /// A composite attribute takes a dictionary keyed by element name (`[String: Any]`; nested
    /// composites as nested dictionaries) and replaces the whole value: elements left out become
    /// `nil`, and `nil` clears every element. A key that is not an element, or an element value of
    /// the wrong type, throws and changes nothing.
    public func setConvertedValue(_ value: Any?, forKey key: String) throws {
        guard let slot = entity.index(ofProperty: key) else {
            if let composite = entity.compositesByKeyPath[key] { return try setCompositeValue(value, composite) }
            throw unknownKey(key)
        }
        checkConfinement("setValue(_:forKey: \"\(key)\")")
        switch entity.slotKinds[slot] {
        case .attribute(let type):
            if let exact = StoreValueCoercion.exactMatch(value, type) {
                try setStoreValue(exact, slot: slot)
                return
            }
            // Attribute slots have attribute descriptions.
            try setStoreValue(try convertIn(value, entity.properties[slot].attribute!), slot: slot)
        case .transformed:
            try setStoreValue(try convertIn(value, entity.properties[slot].attribute!), slot: slot)
        case .toOne, .toMany:
            // Relationship slots have relationship descriptions.
            try setRelationship(value, slot: slot, entity.properties[slot].relationship!)
        }
    }

    /// The value of `key` by subscript: `person["name"]`.
    public subscript(key: String) -> Any? {
        get { value(forKey: key) }
        set { setValue(newValue, forKey: key) }
    }

    /// The value of `key` as a Swift type the caller names: `person["age"] = 42`,
    /// `let age: Int? = person["age"]`.
    ///
    /// Swift picks this subscript whenever the value's type converts to a store value (every
    /// attribute type's Swift type, and optionals of them). It reads and writes what the `Any?`
    /// subscript does, with the same conversions and the same stop on misuse, without boxing the
    /// value in `Any` and casting it back. Transformable attributes take the general path.
    @inlinable public subscript<Value: AttributeValueConvertible>(key: String) -> Value? {
        get {
            guard let stored = _attributeValue(forKey: key) else { return value(forKey: key) as? Value }
            return Value(storeValue: stored)
        }
        set {
            do {
                try _setAttributeValue(newValue?.storeValue ?? .null, forKey: key, general: newValue.map { $0 as Any })
            } catch {
                _setterFailed(error)
            }
        }
    }

    /// Sets an attribute from a typed Swift value, converting it as ``setConvertedValue(_:forKey:)``
    /// does an `Any?`; throws for an unknown key or a value that does not fit.
    @inlinable public func setConvertedValue<Value: AttributeValueConvertible>(_ value: Value?, forKey key: String)
        throws
    {
        try _setAttributeValue(value?.storeValue ?? .null, forKey: key, general: value.map { $0 as Any })
    }

    /// The stored value of the attribute `key` (`.null` while it has none), or `nil` when `key`
    /// is not a plain attribute (a transformable attribute or a relationship). Stops on an
    /// unknown key, as ``value(forKey:)`` does. For the typed subscript, inlined into callers.
    @usableFromInline func _attributeValue(forKey key: String) -> StoreValue? {
        guard let (slot, kind) = slotAndKind(ofKey: key) else {
            if entity._isComposite(key) { return nil }  // a composite takes the general path
            // Misuse no valid program commits: asking an object for a key its entity lacks.
            preconditionFailure("\(unknownKey(key))")
        }
        guard case .attribute = kind else { return nil }
        checkConfinement("value(forKey: \"\(key)\")")
        fireFault()
        return values.isEmpty ? .null : values[slot]
    }

    /// The slot of the property `key` (``EntityDescription/index(ofProperty:)``), looked up without
    /// retaining the entity.
    ///
    /// Every object of an entity shares its description, so the retain and release a plain call
    /// makes around the lookup land on one reference count from every thread reading objects:
    /// with two contexts reading on two cores, that count's cache line went back and forth on
    /// every attribute read (`swift_retain` 14% of a reader's time alone, 33% beside another).
    /// `_withUnsafeGuaranteedRef` is safe here: the object's ID holds the entity strongly for as
    /// long as the object lives, and the lookup reads the entity's immutable name index without
    /// calling out, so nothing can release the entity during it.
    @inline(__always) final func slot(ofKey key: String) -> Int? {
        Unmanaged.passUnretained(objectID.entity)._withUnsafeGuaranteedRef { $0.index(ofProperty: key) }
    }

    /// The identity of the object's entity, read without retaining it (see ``slot(ofKey:)``).
    @inline(__always) final var entityIdentifier: ObjectIdentifier {
        Unmanaged.passUnretained(objectID.entity)._withUnsafeGuaranteedRef { ObjectIdentifier($0) }
    }

    /// The slot of the property `key` and what kind of slot it is, looked up without retaining
    /// the entity, as ``slot(ofKey:)`` does (safe for the same reasons: the kinds are immutable).
    @inline(__always) final func slotAndKind(ofKey key: String) -> (slot: Int, kind: SlotKind)? {
        Unmanaged.passUnretained(objectID.entity)._withUnsafeGuaranteedRef { entity in
            entity.index(ofProperty: key).map { ($0, entity.slotKinds[$0]) }
        }
    }

    /// Sets the attribute `key` from `stored`, converted for the attribute as
    /// ``setConvertedValue(_:forKey:)`` converts; a transformable attribute or a relationship
    /// takes `general()` down the `Any?` path instead.
    @usableFromInline func _setAttributeValue(
        _ stored: StoreValue, forKey key: String, general: @autoclosure () -> Any?
    ) throws {
        guard let (slot, kind) = slotAndKind(ofKey: key) else {
            if entity._isComposite(key) { return try setConvertedValue(general(), forKey: key) }
            throw unknownKey(key)
        }
        guard case .attribute(let type) = kind else {
            return try setConvertedValue(general(), forKey: key)
        }
        checkConfinement("setValue(_:forKey: \"\(key)\")")
        if let exact = StoreValueCoercion.exactMatch(stored, type) { return try setStoreValue(exact, slot: slot) }
        // Attribute slots have attribute descriptions.
        let converted = try StoreValueCoercion.coerce(
            stored, to: entity.properties[slot].attribute!, entity: entity.name)
        try setStoreValue(converted, slot: slot)
    }

    /// The value of an attribute as a typed Swift value, or `nil` when it is `nil` or does not fit.
    public func value<T: AttributeValueConvertible>(forKey key: String, as type: T.Type) -> T? {
        guard let slot = slot(ofKey: key) else { return nil }
        checkConfinement("value(forKey: \"\(key)\", as:)")
        fireFault()
        guard !values.isEmpty else { return nil }
        return T(storeValue: values[slot])
    }

    /// The stored form of a property (relationships as row references). Fires the fault.
    ///
    /// - Throws: ``StoreError/Code/invalidRequest`` for an unknown key, or a composite attribute
    ///   (it has no single stored form: read its elements by key path); the store's error when the
    ///   fault or the relationship cannot be loaded.
    public func storeValue(forKey key: String) throws -> StoreValue {
        guard let slot = entity.index(ofProperty: key) else {
            if let composite = entity.compositesByKeyPath[key] {
                throw StoreError(
                    .invalidRequest,
                    "'\(entity.name).\(key)' is a composite attribute, stored as its elements: read them by key path ('\(exampleElement(composite))') or read the whole value with value(forKey:)"
                )
            }
            throw unknownKey(key)
        }
        checkConfinement("storeValue(forKey: \"\(key)\")")
        try fireFaultThrowing()
        guard !values.isEmpty else { return .null }
        if entity.properties[slot].relationship?.isToMany == true { try loadToMany(slot) }
        return values[slot]
    }

    /// Sets an attribute from its stored form, checking the value's kind against the attribute.
    ///
    /// - Throws: ``StoreError/Code/invalidRequest`` for an unknown key, a relationship key, or a
    ///   value of the wrong kind; for a composite attribute, any value but `.null` (which clears it).
    public func setStoreValue(_ value: StoreValue, forKey key: String) throws {
        guard let slot = entity.index(ofProperty: key) else {
            if let composite = entity.compositesByKeyPath[key] { return try setCompositeStoreValue(value, composite) }
            throw unknownKey(key)
        }
        checkConfinement("setStoreValue(_:forKey: \"\(key)\")")
        guard let attribute = entity.properties[slot].attribute else {
            throw StoreError(.invalidRequest, "'\(entity.name).\(key)' is a relationship; set it with an object")
        }
        try setStoreValue(try StoreValueCoercion.coerce(value, to: attribute, entity: entity.name), slot: slot)
    }

    /// The destination of a to-one relationship.
    public func object(forKey key: String) -> ManagedObject? { value(forKey: key) as? ManagedObject }

    /// The destinations of a to-many relationship, in order for ordered relationships and by
    /// object ID otherwise.
    public func objects(forKey key: String) -> [ManagedObject] {
        let slot = requireSlot(key)
        checkConfinement("objects(forKey: \"\(key)\")")
        fireFault()
        guard let context = managedObjectContext, !values.isEmpty else { return [] }
        loadToManyRecording(slot)
        guard case .references(let ids) = values[slot] else { return [] }
        return context.objects(for: ids, relatedTo: self)
    }

    /// The object IDs of a relationship's destinations, without firing their faults.
    public func objectIDs(forRelationshipNamed key: String) -> [ManagedObjectID] {
        let slot = requireSlot(key)
        checkConfinement("objectIDs(forRelationshipNamed: \"\(key)\")")
        fireFault()
        guard let context = managedObjectContext, !values.isEmpty else { return [] }
        loadToManyRecording(slot)
        switch values[slot] {
        case .reference(let id): return [context.objectID(for: id, relatedTo: self)]
        case .references(let ids): return ids.map { context.objectID(for: $0, relatedTo: self) }
        default: return []
        }
    }

    /// Adds `object` to a to-many relationship (at the end of an ordered one), updating the inverse.
    public func addObject(_ object: ManagedObject, toRelationship key: String) {
        let slot = requireRelationship(key, toMany: true)
        guard let context = context(for: key) else { return }
        context.checkConfinement("addObject(_:toRelationship: \"\(key)\")", of: self)
        do {
            try context.link(self, slot: slot, to: object)
        } catch {
            _setterFailed(error)
        }
    }

    /// Removes `object` from a to-many relationship, updating the inverse.
    public func removeObject(_ object: ManagedObject, fromRelationship key: String) {
        let slot = requireRelationship(key, toMany: true)
        guard let context = context(for: key) else { return }
        context.checkConfinement("removeObject(_:fromRelationship: \"\(key)\")", of: self)
        do {
            try context.unlink(self, slot: slot, from: object)
        } catch {
            _setterFailed(error)
        }
    }

    // MARK: Internals

    func requireSlot(_ key: String) -> Int {
        guard let slot = entity.index(ofProperty: key) else {
            // Misuse no valid program commits: asking an object for a key its entity lacks.
            preconditionFailure("\(unknownKey(key))")
        }
        return slot
    }

    private func requireRelationship(_ key: String, toMany: Bool) -> Int {
        let slot = requireSlot(key)
        guard let relationship = entity.properties[slot].relationship, relationship.isToMany == toMany else {
            // Misuse no valid program commits: relationship calls on an attribute or the wrong cardinality.
            preconditionFailure("'\(entity.name).\(key)' is not a \(toMany ? "to-many" : "to-one") relationship")
        }
        return slot
    }

    private func context(for key: String) -> ManagedObjectContext? {
        guard let context = managedObjectContext else {
            // Misuse no valid program commits: relationships need both objects in a context.
            preconditionFailure("set relationship '\(entity.name).\(key)' on an object that is in no context")
        }
        return context
    }

    /// What a setter that cannot throw does with an error: misuse (an unknown key, a value of the
    /// wrong type, a deleted object) stops the program with the message, as Core Data raises; a
    /// store error (a fault that did not load, a row gone from the store) leaves the change
    /// unmade and is kept by the context, whose next save throws it.
    @usableFromInline func _setterFailed(_ error: any Error) {
        if let storeError = error as? StoreError, storeError.code != .invalidRequest, let context = managedObjectContext
        {
            context.noteAccessFailure(storeError)
            return
        }
        // Misuse no valid program commits: wrong key, type or state passed to a non-throwing setter.
        preconditionFailure("\(error)")
    }

    func unknownKey(_ key: String) -> StoreError {
        StoreError(.invalidRequest, "entity '\(entity.name)' has no property named '\(key)'")
    }

    /// Loads the values of a fault, throwing the store's error when they cannot be loaded; does
    /// nothing for a loaded object.
    ///
    /// Property reads fire faults themselves but cannot throw: when a store error stops them, they
    /// return `nil` and the context keeps the error for its next save
    /// (``ManagedObjectContext/accessFailure``). Call this first where you want the error at once.
    /// After it returns, the object is loaded, or ``isAccessible`` is `false` because its row is
    /// gone from the store.
    ///
    /// - Throws: ``StoreError`` from the store; the object stays a fault, and a later call tries again.
    public func fulfillFault() throws {
        checkConfinement("fulfillFault()")
        try fireFaultThrowing()
    }

    /// Loads the values of a fault; nothing for a loaded object (the common case, checked inline
    /// by every property read). A store error leaves the object a fault and is kept by the context.
    @inline(__always) func fireFault() {
        if faulted { fulfillFaultRecording() }
    }

    /// ``fireFault()`` that throws the store's error instead of leaving it with the context.
    @inline(__always) func fireFaultThrowing() throws {
        if faulted { try fulfillFaultNow() }
    }

    private func fulfillFaultRecording() {
        do {
            try fulfillFaultNow()
        } catch {
            managedObjectContext?.noteAccessFailure(error)
        }
    }

    private func fulfillFaultNow() throws {
        if let context = managedObjectContext {
            try context.fulfillFaultThrowing(self)
        } else if let snapshot {
            fulfill(from: snapshot)
        }
    }

    func loadToMany(_ slot: Int) throws {
        if case .unfetched = values[slot], let context = managedObjectContext {
            try context.loadToMany(self, slot: slot)
        }
    }

    /// Loads an unfetched to-many slot; a store error leaves it unfetched and is kept by the context.
    func loadToManyRecording(_ slot: Int) {
        do {
            try loadToMany(slot)
        } catch {
            managedObjectContext?.noteAccessFailure(error)
        }
    }

    /// Refuses changes to an object that cannot hold them: one whose values could not be loaded,
    /// whose row is gone, or which is deleted.
    func checkChangeable(_ key: @autoclosure () -> String) throws {
        try fireFaultThrowing()
        if faulted {
            throw StoreError(
                .invalidRequest,
                "cannot change '\(key())' of \(entity.name) \(objectID): it is a fault whose context is gone; change objects only while their context lives",
                objectIDs: [objectID])
        }
        if inaccessible {
            throw StoreError(
                .notFound,
                "cannot change '\(key())' of \(entity.name) \(objectID): its row no longer exists in the store (deleted elsewhere); refetch or drop the object",
                store: objectID.persistentStore?.displayName, objectIDs: [objectID])
        }
        if deleted {
            throw StoreError(
                .invalidRequest, "cannot change '\(key())' of a deleted \(entity.name)", objectIDs: [objectID])
        }
    }

    func setStoreValue(_ value: StoreValue, slot: Int) throws {
        // The usual object (loaded, in the store or inserted, not deleted) skips the call.
        if needsChangeCheck { try checkChangeable(entity.properties[slot].name) }
        values[slot] = value
        markChanged(slot)
    }

    func markChanged(_ slot: Int) {
        markSlotChanged(slot)
        // The context is alive while the object is registered in it (see contextReference); the
        // guaranteed reference spares a retain and release per change.
        if !inserted {
            contextReference?._withUnsafeGuaranteedRef { $0.noteUpdated(self) }
        } else {
            // An inserted object changed in a later event is an updated object of that event's
            // objects-did-change, as in Core Data (nothing is recorded while nobody observes).
            contextReference?._withUnsafeGuaranteedRef { $0.noteChanged(self) }
        }
    }

    private func relationshipValue(slot: Int, _ relationship: RelationshipDescription) -> Any? {
        guard let context = managedObjectContext else { return nil }
        if relationship.isToMany {
            loadToManyRecording(slot)
            guard case .references(let ids) = values[slot] else {
                return relationship.isOrdered ? [ManagedObject]() : Set<ManagedObject>()
            }
            let objects = context.objects(for: ids, relatedTo: self)
            return relationship.isOrdered ? objects as Any : Set(objects) as Any
        }
        guard case .reference(let id) = values[slot] else { return nil }
        return context.object(for: id, relatedTo: self)
    }

    private func setRelationship(_ value: Any?, slot: Int, _ relationship: RelationshipDescription) throws {
        guard let context = managedObjectContext else {
            throw StoreError(
                .invalidRequest,
                "set relationship '\(entity.name).\(relationship.name)' on an object that is in no context")
        }
        if relationship.isToMany {
            let targets: [ManagedObject]
            switch value {
            case nil, is NSNull: targets = []
            case let array as [ManagedObject]: targets = array
            case let set as Set<ManagedObject>: targets = set.sorted { $0.objectID.rowID < $1.objectID.rowID }
            default:
                throw StoreError(
                    .invalidRequest,
                    "'\(entity.name).\(relationship.name)' takes [ManagedObject] or Set<ManagedObject>, got \(type(of: value!))"
                )  // value is non-nil here
            }
            try context.replaceToMany(self, slot: slot, with: targets)
        } else {
            switch value {
            case nil, is NSNull: try context.setToOne(self, slot: slot, to: nil)
            case let object as ManagedObject: try context.setToOne(self, slot: slot, to: object)
            default:
                throw StoreError(
                    .invalidRequest,
                    // value is non-nil here
                    "'\(entity.name).\(relationship.name)' takes a ManagedObject, got \(type(of: value!))")
            }
        }
    }

    /// A stored value as the Swift value `value(forKey:)` returns for an attribute of `type`
    /// without a transformer.
    static func plainValue(_ value: StoreValue, _ type: AttributeType) -> Any? {
        switch value {
        case .null: nil
        case .integer(let i): Int(truncatingIfNeeded: i)
        case .double(let d): type == .float ? Float(d) : d
        case .decimal(let d): d
        case .string(let s): s
        case .bool(let b): b
        case .date(let d): d
        case .binary(let data): data
        case .uuid(let u): u
        case .uri(let u): u
        case .reference, .references, .unfetched: nil
        }
    }

    func convertOut(_ value: StoreValue, slot: Int) throws -> Any? {
        guard let attribute = entity.properties[slot].attribute else { return nil }
        switch value {
        case .null: return nil
        case .integer(let i): return Int(truncatingIfNeeded: i)
        case .double(let d): return attribute.type == .float ? Float(d) : d
        case .decimal(let d): return d
        case .string(let s): return s
        case .bool(let b): return b
        case .date(let d): return d
        case .binary(let data):
            if attribute.type == .transformable, let name = attribute.valueTransformerName,
                let transformer = AttributeValueTransformers.transformer(named: name)
            {
                return try transformer.reverseTransformedValue(data)
            }
            return data
        case .uuid(let u): return u
        case .uri(let u): return u
        case .reference, .references, .unfetched: return nil
        }
    }

    func convertIn(_ value: Any?, _ attribute: AttributeDescription) throws -> StoreValue {
        if attribute.type == .transformable, let value, !(value is NSNull), !(value is Data),
            let name = attribute.valueTransformerName
        {
            guard let transformer = AttributeValueTransformers.transformer(named: name) else {
                throw StoreError(
                    .invalidRequest,
                    "attribute '\(entity.name).\(attribute.name)' uses value transformer '\(name)', which is not registered; register it with AttributeValueTransformers.register(_:named:)"
                )
            }
            return try transformer.transformedValue(value).map(StoreValue.binary) ?? .null
        }
        return try StoreValueCoercion.coerce(any: value, to: attribute, entity: entity.name)
    }
}
