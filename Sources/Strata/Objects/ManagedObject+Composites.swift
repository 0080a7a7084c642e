import Foundation

/// Composite attributes on objects: the whole value as a dictionary keyed by element name
/// (`value(forKey: "location")`), and each element by its key path (`location.latitude`), which
/// is a slot of its own (see ``EntityDescription/properties``).
extension ManagedObject {
    /// The value of the composite at `keyPath` as `[String: Any]` (nested composites as nested
    /// dictionaries; elements that are `nil` left out), or `nil` when every element is `nil`.
    func compositeValue(_ composite: CompositeSlots) -> Any? {
        checkConfinement("value(forKey: \"\(composite.keyPath)\")")
        fireFault()
        guard !values.isEmpty else { return nil }
        return dictionary(composite.attribute, at: composite.keyPath)
    }

    private func dictionary(_ composite: AttributeDescription, at keyPath: String) -> [String: Any]? {
        var result: [String: Any] = [:]
        for element in composite.elements {
            let path = keyPath + "." + element.name
            if element.isComposite {
                if let inner = dictionary(element, at: path) { result[element.name] = inner }
                continue
            }
            // Every leaf element of a composite of the entity has a slot.
            guard let slot = entity.index(ofProperty: path) else { continue }
            let value: Any?
            switch entity.slotKinds[slot] {
            case .attribute(let type): value = Self.plainValue(values[slot], type)
            // As for a plain transformable attribute: a value its transformer cannot read back reads as nil.
            case .transformed: value = try? convertOut(values[slot], slot: slot)  // safe: transformer errors only
            case .toOne, .toMany: value = nil
            }
            if let value { result[element.name] = value }
        }
        return result.isEmpty ? nil : result
    }

    /// Sets a composite from a dictionary keyed by element name (`[String: Any]`, `[String: Any?]`,
    /// `[String: StoreValue]`; a nested composite from a nested dictionary), or clears it for
    /// `nil`. Elements the dictionary leaves out become `nil`. Nothing changes unless every
    /// element converts.
    ///
    /// - Throws: ``StoreError/Code/invalidRequest`` for a value that is not a dictionary, a key
    ///   that is not an element, or an element value of the wrong type.
    func setCompositeValue(_ value: Any?, _ composite: CompositeSlots) throws {
        checkConfinement("setValue(_:forKey: \"\(composite.keyPath)\")")
        var assignments: [(slot: Int, value: StoreValue)] = []
        try collect(Self.unwrapped(value), composite.attribute, at: composite.keyPath, into: &assignments)
        try checkChangeable(composite.keyPath)
        for assignment in assignments { try setStoreValue(assignment.value, slot: assignment.slot) }
    }

    /// Sets a composite from its stored form: only `.null` (clearing it) has one.
    func setCompositeStoreValue(_ value: StoreValue, _ composite: CompositeSlots) throws {
        guard value.isNull else {
            throw StoreError(
                .invalidRequest,
                "'\(entity.name).\(composite.keyPath)' is a composite attribute: set a dictionary with setValue(_:forKey:), or its elements by key path ('\(exampleElement(composite))')"
            )
        }
        try setCompositeValue(nil, composite)
    }

    func exampleElement(_ composite: CompositeSlots) -> String {
        composite.leafSlots.first.map { entity.properties[$0].name } ?? composite.keyPath
    }

    private func collect(
        _ value: Any?, _ composite: AttributeDescription, at keyPath: String,
        into assignments: inout [(slot: Int, value: StoreValue)]
    ) throws {
        let given: [String: Any]
        switch value {
        case nil, is NSNull: given = [:]
        case let dictionary as [String: Any]: given = dictionary
        case let dictionary as [String: StoreValue]: given = dictionary
        default:
            // `value` is non-nil here.
            throw StoreError(
                .invalidRequest,
                "composite attribute '\(entity.name).\(keyPath)' takes a dictionary keyed by element name ([String: Any]) or nil, got \(type(of: value!))"
            )
        }
        let names = Set(composite.elements.map(\.name))
        if let unknown = given.keys.sorted().first(where: { !names.contains($0) }) {
            throw StoreError(
                .invalidRequest,
                "composite attribute '\(entity.name).\(keyPath)' has no element '\(unknown)'; its elements are \(composite.elements.map(\.name).joined(separator: ", "))"
            )
        }
        for element in composite.elements {
            let path = keyPath + "." + element.name
            let elementValue = given[element.name].flatMap(Self.unwrapped)
            if element.isComposite {
                try collect(elementValue, element, at: path, into: &assignments)
                continue
            }
            // Every leaf element of a composite of the entity has a slot with its description.
            guard let slot = entity.index(ofProperty: path), let attribute = entity.properties[slot].attribute else {
                continue
            }
            assignments.append((slot, try convertIn(elementValue, attribute)))
        }
    }

    /// `value` with any layers of `Optional` removed (a `[String: Any?]` holds its `nil`s as
    /// optionals boxed in `Any`).
    static func unwrapped(_ value: Any?) -> Any? {
        guard let value else { return nil }
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        guard let wrapped = mirror.children.first?.value else { return nil }
        return unwrapped(wrapped)
    }
}
