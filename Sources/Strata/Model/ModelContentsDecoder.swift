import Foundation

/// What a model file says, decoded but not yet checked: the arguments of
/// ``ManagedObjectModel/init(entities:configurations:fetchRequestTemplates:versionIdentifiers:userInfo:)``
/// plus the line of each element, so that errors found while checking can name a line.
struct ModelContents {
    var entities: [EntityDescription] = []
    var configurations: [String: [String]] = [:]
    var fetchRequestTemplates: [String: FetchRequestTemplate] = [:]
    var versionIdentifiers: [String] = []
    var userInfo: [String: String] = [:]
    /// Line of each element, keyed the way ``ModelError/element`` names it ("entity Person",
    /// "relationship Person.cars", "fetchRequest allPeople", …).
    var lines: [String: Int] = [:]
    /// What was loaded but not used as written, in file order.
    var warnings: [ModelWarning] = []
}

/// Maps the element tree of an Xcode `.xcdatamodel/contents` file onto model descriptions
/// (reference/core-data.md §2.5). Elements and attributes Xcode writes that Strata does not use are
/// skipped silently (``ModelVocabulary``); unknown ones, and values that cannot be used as
/// written, load with a ``ModelWarning``, so files from newer Xcodes still load. Only what would
/// make the model unsafe to use (a missing required attribute, an unknown attribute type or delete
/// rule, a validation limit that does not parse) is a ``ModelError`` naming the file, line and
/// element.
struct ModelContentsDecoder {
    let fileName: String
    var contents = ModelContents()
    /// Model-level `<composite>` declarations by name, and the ones decoded so far.
    var compositeDeclarations: [String: ModelXMLElement] = [:]
    var decodedComposites: [String: [AttributeDescription]] = [:]

    init(fileName: String) {
        self.fileName = fileName
    }

    /// Decodes the root `<model>` element.
    mutating func decode(_ root: ModelXMLElement) throws -> ModelContents {
        guard root.name == "model" else {
            throw error(
                .malformed, "the root element is <\(root.name)>, not <model>: this is not an Xcode model file", root,
                root.name)
        }
        if let identifier = root["userDefinedModelVersionIdentifier"], !identifier.isEmpty {
            contents.versionIdentifiers = [identifier]
        }
        checkAttributes(of: root, "model")
        checkChildren(of: root, "model", handled: ["composite"])
        try collectComposites(root)
        for child in root.children {
            switch child.name {
            case "entity": contents.entities.append(try entity(child))
            case "fetchRequest": try fetchRequestTemplate(child)
            case "configuration": try configuration(child)
            case "userInfo":
                checkVocabulary(of: child, "model")
                contents.userInfo = try userInfo(child)
            // `elements` (diagram layout), `composite` (collected above); unknown elements were warned about above
            default: break
            }
        }
        // Warnings in file order (checks run element by element, children after their parent).
        contents.warnings = contents.warnings.enumerated()
            .sorted { ($0.element.line ?? 0, $0.offset) < ($1.element.line ?? 0, $1.offset) }.map(\.element)
        return contents
    }

    // MARK: Entities

    private mutating func entity(_ element: ModelXMLElement) throws -> EntityDescription {
        let name = try required("name", of: element, label: "entity", what: "an <entity>")
        try checkName(name, kind: "entity", element)
        let label = "entity \(name)"
        contents.lines[label] = element.line
        checkAttributes(of: element, label)
        checkChildren(of: element, label)
        for child in element.children where ["uniquenessConstraints", "fetchIndex", "userInfo"].contains(child.name) {
            checkVocabulary(of: child, label)
        }
        var properties: [PropertyDescription] = []
        var fetched: [FetchedPropertyDescription] = []
        var constraints: [[String]] = []
        var indexes: [FetchIndexDescription] = []
        var info: [String: String] = [:]
        for child in element.children {
            switch child.name {
            case "attribute": properties.append(.attribute(try attribute(child, entity: name)))
            case "relationship": properties.append(.relationship(try relationship(child, entity: name)))
            case "fetchedProperty": fetched.append(try fetchedProperty(child, entity: name))
            case "uniquenessConstraints": constraints += try uniquenessConstraints(child, entity: name)
            case "fetchIndex": if let index = try fetchIndex(child, entity: name) { indexes.append(index) }
            case "userInfo": info = try userInfo(child)
            default: break  // legacy `compoundIndexes`; unknown elements were warned about above
            }
        }
        return EntityDescription(
            name, parent: nonEmpty(element["parentEntity"]), isAbstract: element.flag("isAbstract"),
            properties: properties, uniquenessConstraints: constraints, indexes: indexes,
            representedClassName: nonEmpty(element["representedClassName"]),
            renamingIdentifier: nonEmpty(element["elementID"]),
            versionHashModifier: nonEmpty(element["versionHashModifier"]), userInfo: info, fetchedProperties: fetched)
    }

    // MARK: Relationships

    private mutating func relationship(_ element: ModelXMLElement, entity: String) throws -> RelationshipDescription {
        let name = try required(
            "name", of: element, label: "relationship", what: "a <relationship> of entity '\(entity)'")
        try checkName(name, kind: "relationship", owner: entity, element)
        let label = "relationship \(entity).\(name)"
        contents.lines[label] = element.line
        checkVocabulary(of: element, label)
        let destination = try required(
            "destinationEntity", of: element, label: label, what: "relationship '\(entity).\(name)'")
        let inverse = nonEmpty(element["inverseName"])
        if let inverseEntity = nonEmpty(element["inverseEntity"]), inverse != nil, inverseEntity != destination {
            throw error(
                .invalidInverse,
                "relationship '\(entity).\(name)' has destination '\(destination)' but its inverse is on '\(inverseEntity)'",
                element, label)
        }
        var rule = DeleteRule.nullify
        if let ruleName = element["deletionRule"] {
            guard let known = DeleteRule(xcodeName: ruleName) else {
                // Refused: guessing a delete rule could delete (or keep) objects the model does not mean to.
                let known = DeleteRule.allCases.map { "'\($0.xcodeName)'" }.joined(separator: ", ")
                throw error(
                    .invalidValue,
                    "unknown deletionRule '\(ruleName)' (expected one of \(known)); choose the rule in Xcode's model editor",
                    element, label)
            }
            rule = known
        }
        let toMany = element.flag("toMany")
        let isOptional = element.flag("optional")
        let minCount = try count("minCount", of: element, label: label) ?? (isOptional ? 0 : 1)
        let maxCount = try count("maxCount", of: element, label: label) ?? (toMany ? 0 : 1)
        return RelationshipDescription(
            name, destination: destination, inverse: inverse, toMany: toMany, ordered: element.flag("ordered"),
            isOptional: isOptional, isTransient: element.flag("transient"), minCount: minCount, maxCount: maxCount,
            deleteRule: rule, renamingIdentifier: nonEmpty(element["elementID"]),
            versionHashModifier: nonEmpty(element["versionHashModifier"]), userInfo: try userInfo(of: element))
    }

    private func count(_ key: String, of element: ModelXMLElement, label: String) throws -> Int? {
        guard let text = element[key] else { return nil }
        do {
            return try ModelDefaultValues.length(text)
        } catch {
            throw self.error(
                .invalidValue, "\(key) '\(text)' is not a count (a whole number of at least 0)", element, label)
        }
    }

    // MARK: Fetched properties, constraints, indexes

    private mutating func fetchedProperty(_ element: ModelXMLElement, entity: String) throws
        -> FetchedPropertyDescription
    {
        let name = try required(
            "name", of: element, label: "fetchedProperty", what: "a <fetchedProperty> of entity '\(entity)'")
        try checkName(name, kind: "fetched property", owner: entity, element)
        let label = "fetchedProperty \(entity).\(name)"
        contents.lines[label] = element.line
        checkVocabulary(of: element, label)
        for request in element.children(named: "fetchRequest") { checkVocabulary(of: request, label) }
        guard let request = element.children(named: "fetchRequest").first else {
            throw error(.malformed, "fetched property '\(entity).\(name)' has no <fetchRequest>", element, label)
        }
        let fetchedEntity = try required(
            "entity", of: request, label: label, what: "the fetch request of '\(entity).\(name)'")
        return FetchedPropertyDescription(
            name, entityName: fetchedEntity, predicateFormat: request["predicateString"] ?? "",
            userInfo: try userInfo(of: element))
    }

    private mutating func uniquenessConstraints(_ element: ModelXMLElement, entity: String) throws -> [[String]] {
        let label = "uniquenessConstraint \(entity)"
        contents.lines[label] = contents.lines[label] ?? element.line
        var result: [[String]] = []
        for constraint in element.children(named: "uniquenessConstraint") {
            var names: [String] = []
            for member in constraint.children(named: "constraint") {
                names.append(
                    try required("value", of: member, label: label, what: "a <constraint> of entity '\(entity)'"))
            }
            if !names.isEmpty { result.append(names) }
        }
        return result
    }

    /// A fetch index, or `nil` when it has no element naming a property (expression elements are
    /// not supported and are skipped; an index is a performance hint, never a rule).
    private mutating func fetchIndex(_ element: ModelXMLElement, entity: String) throws -> FetchIndexDescription? {
        let name = try required("name", of: element, label: "fetchIndex", what: "a <fetchIndex> of entity '\(entity)'")
        let label = "fetchIndex \(name)"
        contents.lines[label] = element.line
        var elements: [FetchIndexDescription.Element] = []
        for member in element.children(named: "fetchIndexElement") {
            guard let property = nonEmpty(member["property"]) else {
                if member["expression"] != nil { continue }
                throw error(.malformed, "an element of fetch index '\(name)' names no property", member, label)
            }
            let order = member["order"]?.lowercased() ?? "ascending"
            guard order == "ascending" || order == "descending" else {
                throw error(
                    .invalidValue, "fetch index order '\(order)' is neither ascending nor descending", member, label)
            }
            elements.append(FetchIndexDescription.Element(property, ascending: order == "ascending"))
        }
        return elements.isEmpty ? nil : FetchIndexDescription(name: name, elements: elements)
    }

    // MARK: Model-level parts

    private mutating func fetchRequestTemplate(_ element: ModelXMLElement) throws {
        let name = try required("name", of: element, label: "fetchRequest", what: "a model-level <fetchRequest>")
        try checkName(name, kind: "fetch request template", element)
        let label = "fetchRequest \(name)"
        guard contents.fetchRequestTemplates[name] == nil else {
            throw error(.duplicateName, "two fetch request templates are named '\(name)'", element, label)
        }
        contents.lines[label] = element.line
        checkVocabulary(of: element, label)
        let entity = try required("entity", of: element, label: label, what: "fetch request template '\(name)'")
        // NSFetchRequestResultType raw values: 0 objects, 1 object IDs, 2 dictionaries, 4 a count.
        var resultType = FetchResultType.managedObject
        if let written = element["resultType"] {
            if let number = Int(written), let known = FetchResultType(rawValue: number) {
                resultType = known
            } else {
                warn(
                    "resultType '\(written)' is not one Strata knows (0, 1, 2 or 4); the template returns objects",
                    element, label)
            }
        }
        // Absent means Core Data's default for a fetch request: subentities are included.
        let includesSubentities = element["includeSubentities"].map { _ in element.flag("includeSubentities") } ?? true
        contents.fetchRequestTemplates[name] = FetchRequestTemplate(
            entityName: entity, predicateFormat: element["predicateString"] ?? "",
            includesSubentities: includesSubentities, resultType: resultType,
            fetchLimit: fetchCount("fetchLimit", of: element, label),
            fetchBatchSize: fetchCount("fetchBatchSize", of: element, label))
    }

    /// `fetchLimit`/`fetchBatchSize` of a template: 0 when absent; a value that is not a count is
    /// dropped with a warning (a template's limits are hints to the fetch, not rules of the model).
    private mutating func fetchCount(_ key: String, of element: ModelXMLElement, _ label: String) -> Int {
        guard let text = element[key] else { return 0 }
        do {
            return try ModelDefaultValues.length(text)
        } catch {
            warn("\(key) '\(text)' is not a count (a whole number of at least 0); it is ignored", element, label)
            return 0
        }
    }

    private mutating func configuration(_ element: ModelXMLElement) throws {
        let name = try required("name", of: element, label: "configuration", what: "a <configuration>")
        try checkName(name, kind: "configuration", element)
        let label = "configuration \(name)"
        guard contents.configurations[name] == nil else {
            throw error(.duplicateName, "two configurations are named '\(name)'", element, label)
        }
        contents.lines[label] = element.line
        checkVocabulary(of: element, label)
        var members: [String] = []
        for member in element.children(named: "memberEntity") {
            members.append(
                try required("name", of: member, label: label, what: "a <memberEntity> of configuration '\(name)'"))
        }
        contents.configurations[name] = members
    }

    // MARK: Shared pieces

    /// The entries of the `<userInfo>` child of `element`, or an empty dictionary.
    func userInfo(of element: ModelXMLElement) throws -> [String: String] {
        guard let info = element.children(named: "userInfo").last else { return [:] }
        return try userInfo(info)
    }

    /// The entries of a `<userInfo>` element; a later entry with the same key wins.
    func userInfo(_ element: ModelXMLElement) throws -> [String: String] {
        var result: [String: String] = [:]
        for entry in element.children(named: "entry") {
            let key = try required("key", of: entry, label: "userInfo", what: "a <userInfo> <entry>")
            result[key] = entry["value"] ?? ""
        }
        return result
    }

    /// The non-empty attribute `key` of `element`.
    ///
    /// - Throws: ``ModelError`` `.malformed` naming `what` lacks `key`.
    func required(_ key: String, of element: ModelXMLElement, label: String, what: String) throws -> String {
        guard let value = nonEmpty(element[key]) else {
            throw error(.malformed, "\(what) has no \(key)", element, label)
        }
        return value
    }

    func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }

    /// Throws ``ModelError`` `.invalidName` at `element`'s line unless `name` is an identifier
    /// (``ManagedObjectModel/isValidName(_:)``).
    func checkName(_ name: String, kind: String, owner: String? = nil, _ element: ModelXMLElement) throws {
        guard !ModelNameRule.isIdentifier(name) else { return }
        var error = ModelNameRule.invalidName(name, kind: kind, owner: owner)
        error.file = fileName
        error.line = element.line
        throw error
    }

    /// An error at `element`'s line.
    func error(_ code: ModelError.Code, _ message: String, _ element: ModelXMLElement, _ label: String) -> ModelError {
        ModelError(code, message, file: fileName, line: element.line, element: label)
    }
}
