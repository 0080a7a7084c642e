import Foundation

/// Composite attributes in a model file. The form is not confirmed from a file Xcode wrote (see
/// docs/models.md, "Composite attributes"): a model-level `<composite name="Location">` holds the
/// elements as `<attribute>` children, and an entity's attribute uses it with
/// `attributeType="Composite" composite="Location"`. An element may itself use a composite.
extension ModelContentsDecoder {
    /// Records the model-level `<composite>` declarations of `root`, by name.
    ///
    /// - Throws: ``ModelError`` for a declaration without a valid name, or two with one name.
    mutating func collectComposites(_ root: ModelXMLElement) throws {
        for child in root.children where child.name == "composite" {
            let name = try required("name", of: child, label: "composite", what: "a <composite>")
            try checkName(name, kind: "composite", child)
            let label = "composite \(name)"
            guard compositeDeclarations[name] == nil else {
                throw error(.duplicateName, "two composites are named '\(name)'", child, label)
            }
            contents.lines[label] = child.line
            checkAttributes(of: child, label)
            checkChildren(of: child, label)
            compositeDeclarations[name] = child
        }
    }

    /// The composite attribute an `<attribute attributeType="Composite">` declares: its flags, and
    /// the elements of the `<composite>` it names.
    mutating func compositeAttribute(
        _ element: ModelXMLElement, name: String, entity: String, label: String
    ) throws -> AttributeDescription {
        guard let compositeName = nonEmpty(element["composite"]) else {
            throw error(
                .malformed,
                "composite attribute '\(entity).\(name)' has no composite; name the model-level <composite> it uses with composite=\"…\"",
                element, label)
        }
        let elements = try compositeElements(compositeName, usedBy: element, label: label, resolving: [])
        return .composite(
            name, elements: elements, compositeName: compositeName, isOptional: element.flag("optional"),
            isTransient: element.flag("transient"), renamingIdentifier: nonEmpty(element["elementID"]),
            versionHashModifier: nonEmpty(element["versionHashModifier"]), userInfo: try userInfo(of: element))
    }

    /// The decoded elements of the composite named `name` (each declaration is decoded once).
    private mutating func compositeElements(
        _ name: String, usedBy user: ModelXMLElement, label: String, resolving: [String]
    ) throws -> [AttributeDescription] {
        if let decoded = decodedComposites[name] { return decoded }
        guard let declaration = compositeDeclarations[name] else {
            let known = compositeDeclarations.keys.sorted().map { "'\($0)'" }.joined(separator: ", ")
            throw error(
                .unknownProperty,
                "composite '\(name)' is not declared in the model (declared: \(known.isEmpty ? "none" : known)); add a model-level <composite name=\"\(name)\">",
                user, label)
        }
        let compositeLabel = "composite \(name)"
        guard !resolving.contains(name) else {
            throw error(
                .malformed, "composite '\(name)' contains itself (\((resolving + [name]).joined(separator: " → ")))",
                declaration, compositeLabel)
        }
        guard resolving.count < CompositeExpansion.maximumDepth else {
            throw error(
                .invalidValue,
                "composite '\(name)' nests composites more than \(CompositeExpansion.maximumDepth) deep; flatten it",
                declaration, compositeLabel)
        }
        var elements: [AttributeDescription] = []
        for child in declaration.children where child.name == "attribute" {
            let elementName = try required(
                "name", of: child, label: compositeLabel, what: "an <attribute> of composite '\(name)'")
            if child["attributeType"] == AttributeType.composite.xcodeName {
                try checkName(elementName, kind: "composite element", owner: name, child)
                guard let inner = nonEmpty(child["composite"]) else {
                    throw error(
                        .malformed,
                        "composite element '\(name).\(elementName)' has no composite; name the <composite> it uses",
                        child, compositeLabel)
                }
                var nested = AttributeDescription.composite(
                    elementName, elements: [], compositeName: inner, isOptional: child.flag("optional"),
                    renamingIdentifier: nonEmpty(child["elementID"]),
                    versionHashModifier: nonEmpty(child["versionHashModifier"]), userInfo: try userInfo(of: child))
                nested.elements = try compositeElements(
                    inner, usedBy: child, label: compositeLabel, resolving: resolving + [name])
                elements.append(nested)
            } else {
                elements.append(try attribute(child, entity: name))
            }
        }
        decodedComposites[name] = elements
        return elements
    }
}
