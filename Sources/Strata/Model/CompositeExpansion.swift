import Foundation

/// How composite attributes become slots: each leaf element (an element that is not itself a
/// composite) takes one slot, an attribute named by its key path (`location.latitude`), in
/// declaration order, depth first. The composite itself takes none. See docs/models.md,
/// "Composite attributes".
struct CompositeExpansion {
    /// The deepest nesting of composites a model may have (a declared composite is depth 1). Deep
    /// enough for any real model; it keeps every walk over elements short.
    static let maximumDepth = 8
    /// The most elements (nested ones included, counted once per place they appear) one declared
    /// composite may have: far more than a row needs, few enough that walking a hostile model's
    /// shared composite declarations stays quick.
    static let maximumElements = 1000

    /// Declared composites, in the order met.
    var declared: [AttributeDescription] = []
    /// Every composite, declared and nested, by key path.
    var byKeyPath: [String: CompositeSlots] = [:]
    /// Required composites.
    var requirements: [CompositeRequirement] = []
    /// Leaf slot → the leaf slots of the composite holding it (see ``ValidatedSlot/presence``).
    var presence: [Int: [Int]] = [:]

    /// Appends the leaf slots of a declared composite to `properties`, recording them in `index`.
    /// The composite was checked by ``check(_:path:depth:)``.
    mutating func expand(
        _ composite: AttributeDescription, into properties: inout [PropertyDescription], index: inout [String: Int]
    ) {
        declared.append(composite)
        let leaves = add(composite, keyPath: composite.name, transient: composite.isTransient, &properties, &index)
        if !composite.isOptional, !composite.isTransient {
            requirements.append(CompositeRequirement(name: composite.name, slots: leaves, contextSlots: []))
        }
    }

    /// Adds `composite` at `keyPath` and returns the slots of its leaves.
    private mutating func add(
        _ composite: AttributeDescription, keyPath: String, transient: Bool,
        _ properties: inout [PropertyDescription], _ index: inout [String: Int]
    ) -> [Int] {
        var leaves: [Int] = []
        var nested: [(AttributeDescription, String)] = []
        for element in composite.elements {
            let path = keyPath + "." + element.name
            if element.isComposite {
                leaves += add(element, keyPath: path, transient: transient, &properties, &index)
                nested.append((element, path))
                continue
            }
            var leaf = element
            leaf.name = path
            leaf.isTransient = transient
            index[path] = properties.count
            leaves.append(properties.count)
            properties.append(.attribute(leaf))
        }
        // Elements directly in this composite are required only while it is present.
        for element in composite.elements where !element.isComposite {
            if let slot = index[keyPath + "." + element.name] { presence[slot] = leaves }
        }
        for (element, path) in nested where !element.isOptional && !transient {
            requirements.append(
                CompositeRequirement(name: path, slots: byKeyPath[path]?.leafSlots ?? [], contextSlots: leaves))
        }
        byKeyPath[keyPath] = CompositeSlots(attribute: composite, keyPath: keyPath, leafSlots: leaves)
        return leaves
    }

    /// Checks an attribute as declared: a composite's elements (names, types, nesting, count),
    /// and that only composites have elements.
    ///
    /// - Parameters:
    ///   - attribute: The attribute.
    ///   - path: `Entity.attribute`, for messages.
    static func check(_ attribute: AttributeDescription, path: String) throws {
        var count = 0
        try check(attribute, path: path, depth: 0, count: &count)
    }

    private static func check(_ attribute: AttributeDescription, path: String, depth: Int, count: inout Int) throws {
        let element = "attribute \(path)"
        guard attribute.isComposite else {
            if !attribute.elements.isEmpty {
                throw ModelError(
                    .invalidValue,
                    "attribute '\(path)' is \(attribute.type.xcodeName) but has elements; only composite attributes have elements",
                    element: element)
            }
            return
        }
        guard depth < maximumDepth else {
            throw ModelError(
                .invalidValue,
                "composite attribute '\(path)' nests composites more than \(maximumDepth) deep; flatten the composite",
                element: element)
        }
        guard !attribute.elements.isEmpty else {
            throw ModelError(
                .invalidValue, "composite attribute '\(path)' has no elements; give it at least one", element: element)
        }
        if !attribute.defaultValue.isNull || !attribute.validation.isEmpty {
            throw ModelError(
                .invalidValue,
                "composite attribute '\(path)' has a default or validation rules of its own; set them on its elements",
                element: element)
        }
        count += attribute.elements.count
        guard count <= maximumElements else {
            throw ModelError(
                .invalidValue,
                "composite attribute '\(path.split(separator: ".").prefix(2).joined(separator: "."))' has more than \(maximumElements) elements (nested ones included); split it",
                element: element)
        }
        var seen: Set<String> = []
        for member in attribute.elements {
            let memberPath = "\(path).\(member.name)"
            guard ModelNameRule.isIdentifier(member.name) else {
                throw ModelError(
                    .invalidName,
                    "composite attribute '\(path)' has an element named \(ModelNameRule.display(member.name)), which is not an identifier: \(ModelNameRule.ruleText); rename the element",
                    element: element)
            }
            guard seen.insert(member.name).inserted else {
                throw ModelError(
                    .duplicateName, "composite attribute '\(path)' has two elements named '\(member.name)'",
                    element: element)
            }
            if member.isTransient {
                throw ModelError(
                    .invalidValue,
                    "composite element '\(memberPath)' is transient; elements are stored with their composite (make the composite attribute transient instead)",
                    element: "attribute \(memberPath)")
            }
            if member.type == .undefined || member.type == .objectID {
                throw ModelError(
                    .invalidValue,
                    "composite element '\(memberPath)' has type \(member.type.xcodeName); elements hold stored values",
                    element: "attribute \(memberPath)")
            }
            try check(member, path: memberPath, depth: depth + 1, count: &count)
        }
    }
}
