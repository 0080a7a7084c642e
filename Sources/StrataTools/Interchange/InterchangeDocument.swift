import Foundation
import Strata

/// A problem found in an interchange file, at a JSON path (`$.objects[3].attributes.age`).
public struct InterchangeProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where: a JSONPath-like location.
    public var path: String
    /// What is wrong.
    public var message: String

    /// Creates a problem.
    public init(_ path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}

/// An interchange file checked against a model: every object with its values and the final graph
/// of relationships (both sides), or every problem found.
struct InterchangeDocument {
    struct Object {
        var index: Int
        var entity: EntityDescription
        /// Attribute slot → value, for attributes given.
        var attributes: [Int: StoreValue] = [:]
        /// Relationship slot → member indices (to-one: zero or one), for relationships given.
        var relationships: [Int: [Int]] = [:]
        /// Relationship slot → JSON ids as written, resolved in a second pass.
        var pendingRelationships: [Int: (ids: [String], path: String)] = [:]
        var path: String { "$.objects[\(index)]" }
    }

    /// The objects read, in file order (chunked: a file may hold millions).
    var objects = ChunkedArray<Object>()
    var problems: [InterchangeProblem] = []
    let model: ManagedObjectModel
    /// Whether objects keep their attribute values once checked; without them the document holds
    /// only ids and relationships, and the values are read from the file again when written.
    let keepsValues: Bool
    /// A uniqueness constraint of a hierarchy.
    struct UniqueKey: Hashable {
        var root: String
        var constraint: [String]
    }
    /// The values each object of the file takes under each uniqueness constraint: the object's
    /// position in ``objects`` by constrained values.
    var uniqueValues: [UniqueKey: [[StoreValue]: Int]] = [:]

    /// The id of each object of ``objects``, by position.
    private(set) var ids = InterchangeIDTable()
    /// Whether the document's `objects` array was seen.
    private var sawObjects = false

    /// Parses and checks a document held whole.
    init(_ root: JSONValue, model: ManagedObjectModel, keepsValues: Bool = true) {
        self.init(model: model, keepsValues: keepsValues)
        guard let members = root.objectValue else {
            problems.append(
                .init("$", "expected an object with \"format\", \"version\" and \"objects\", found \(root.kindName)"))
            return
        }
        for (key, value) in members where key != "objects" { header(key, value) }
        if let items = root["objects"] {
            guard let array = items.arrayValue else {
                objectsAreNotAnArray(items)
                finish()
                return
            }
            startObjects()
            for (index, item) in array.enumerated() { add(item, index: index) }
        }
        finish()
    }

    /// Starts an empty document, to be fed with ``header(_:_:)``, ``startObjects()``,
    /// ``add(_:index:)`` and finished with ``finish()`` (a file read as it streams by).
    init(model: ManagedObjectModel, keepsValues: Bool = true) {
        self.model = model
        self.keepsValues = keepsValues
    }

    /// A member of the document other than `objects` (only `format` and `version` matter; the
    /// first of a repeated name counts, as for ``JSONValue``'s subscript).
    mutating func header(_ key: String, _ value: JSONValue) {
        guard key == "format" || key == "version", headerValues[key] == nil else { return }
        headerValues[key] = value
    }

    private var headerValues: [String: JSONValue] = [:]

    /// The `objects` member is there and is an array.
    mutating func startObjects() { sawObjects = true }

    /// The `objects` member is there and is not an array (a repeated `objects` member is ignored).
    mutating func objectsAreNotAnArray(_ value: JSONValue) {
        guard !sawObjects else { return }
        sawObjects = true
        problems.append(.init("$.objects", "expected an array of objects"))
    }

    /// Reads and checks the object at `index` of the `objects` array.
    mutating func add(_ item: JSONValue, index: Int) {
        guard let (read, id) = readObject(item, index: index) else { return }
        var object = read
        if let previous = ids.insert(id) {
            problems.append(
                .init("\(object.path).id", "id '\(id)' is already used by $.objects[\(objects[previous].index)]"))
            return
        }
        checkAttributes(object, position: objects.count)
        if !keepsValues { object.attributes = [:] }
        objects.append(object)
    }

    /// The attribute values given for the object at `position` of ``objects``, read again from
    /// its JSON `item` (a document that does not keep values) and checked again: the model's
    /// attribute rules, and the values under uniqueness constraints, which must be the ones
    /// checked before.
    ///
    /// - Throws: ``ToolError`` (failure) when `item` is not the object that was checked there, or
    ///   no longer checks: the file changed while it was imported.
    mutating func values(of item: JSONValue, at position: Int) throws -> [Int: StoreValue] {
        let known = problems.count
        let read = readObject(item, index: position)
        guard let (object, id) = read, problems.count == known, position < objects.count, ids[position] == id,
            object.entity === objects[position].entity, stillChecks(object, position: position)
        else {
            problems.removeSubrange(known...)
            throw ToolError.failure(
                "$.objects[\(position)] is not the object read before: the file changed while it was imported")
        }
        return object.attributes
    }

    /// Checks the header, then resolves references, merges inverses and checks the model's rules.
    mutating func finish() {
        var headerProblems: [InterchangeProblem] = []
        if headerValues["format"]?.stringValue != "strata-json" {
            headerProblems.append(.init("$.format", "expected \"strata-json\""))
        }
        switch headerValues["version"] {
        case .number("1"): break
        case .number(let n): headerProblems.append(.init("$.version", "version \(n) is not one this build reads (1)"))
        default: headerProblems.append(.init("$.version", "expected the number 1"))
        }
        if !sawObjects { headerProblems.append(.init("$.objects", "expected an array of objects")) }
        problems.insert(contentsOf: headerProblems, at: 0)
        guard sawObjects else { return }
        resolveReferences()
        mergeInverses()
        checkRelationshipCounts()
    }

    /// A composite's value: an object keyed by element name (nested composites as objects) or
    /// `null`; elements left out are `nil`.
    private mutating func readComposite(
        _ value: JSONValue, _ composite: AttributeDescription, keyPath: String, at: String, into object: inout Object
    ) {
        let entity = object.entity
        if composite.isTransient {
            problems.append(.init(at, "attribute '\(keyPath)' is transient and never stored"))
            return
        }
        let given: [(String, JSONValue)]
        switch value {
        case .null: given = []
        default:
            guard let members = value.objectValue else {
                problems.append(
                    .init(
                        at,
                        "'\(keyPath)' is a composite attribute: expected an object of its elements or null, found \(value.kindName)"
                    ))
                return
            }
            given = members
        }
        let names = Set(composite.elements.map(\.name))
        for (name, _) in given where !names.contains(name) {
            problems.append(
                .init(
                    "\(at).\(name)",
                    "composite '\(keyPath)' has no element '\(name)'; its elements are \(composite.elements.map(\.name).joined(separator: ", "))"
                ))
        }
        for element in composite.elements {
            let path = keyPath + "." + element.name
            let member = given.last { $0.0 == element.name }?.1 ?? .null
            if element.isComposite {
                readComposite(member, element, keyPath: path, at: "\(at).\(element.name)", into: &object)
                continue
            }
            // Every leaf element of a composite of the entity has an attribute slot.
            guard let slot = entity.index(ofProperty: path), let attribute = entity.properties[slot].attribute else {
                continue
            }
            switch InterchangeValue.storeValue(member, for: attribute) {
            case .success(let stored): object.attributes[slot] = stored
            case .failure(let problem): problems.append(.init("\(at).\(element.name)", problem.message))
            }
        }
    }

    private mutating func readObject(_ item: JSONValue, index: Int) -> (Object, id: String)? {
        let path = "$.objects[\(index)]"
        guard let members = item.objectValue else {
            problems.append(.init(path, "expected an object, found \(item.kindName)"))
            return nil
        }
        for (key, _) in members where !["entity", "id", "attributes", "relationships"].contains(key) {
            problems.append(
                .init("\(path).\(key)", "unknown member; objects hold entity, id, attributes and relationships"))
        }
        guard let entityName = item["entity"]?.stringValue else {
            problems.append(.init("\(path).entity", "expected the entity's name as a string"))
            return nil
        }
        guard let entity = model.entity(named: entityName) else {
            problems.append(.init("\(path).entity", "the model has no entity '\(entityName)'"))
            return nil
        }
        if entity.isAbstract {
            problems.append(.init("\(path).entity", "entity '\(entityName)' is abstract; use one of its subentities"))
        }
        guard let id = item["id"]?.stringValue, !id.isEmpty else {
            problems.append(.init("\(path).id", "expected a non-empty string id"))
            return nil
        }
        var object = Object(index: index, entity: entity)
        if let attributes = item["attributes"] {
            guard let members = attributes.objectValue else {
                problems.append(.init("\(path).attributes", "expected an object, found \(attributes.kindName)"))
                return (object, id)
            }
            for (name, value) in members {
                // Built only for a problem: most objects have none, and a file has millions of values.
                func at() -> String { "\(path).attributes.\(name)" }
                if entity.index(ofProperty: name) == nil, let composite = entity.compositeAttribute(atKeyPath: name) {
                    readComposite(value, composite, keyPath: name, at: at(), into: &object)
                    continue
                }
                guard let slot = entity.index(ofProperty: name), let attribute = entity.properties[slot].attribute
                else {
                    let hint = entity.index(ofProperty: name) != nil ? "; it is a relationship" : ""
                    problems.append(.init(at(), "entity '\(entity.name)' has no attribute '\(name)'\(hint)"))
                    continue
                }
                if attribute.isTransient {
                    problems.append(.init(at(), "attribute '\(name)' is transient and never stored"))
                    continue
                }
                switch InterchangeValue.storeValue(value, for: attribute) {
                case .success(let stored): object.attributes[slot] = stored
                case .failure(let problem): problems.append(.init(at(), problem.message))
                }
            }
        }
        if let relationships = item["relationships"] {
            guard let members = relationships.objectValue else {
                problems.append(.init("\(path).relationships", "expected an object, found \(relationships.kindName)"))
                return (object, id)
            }
            for (name, value) in members {
                let at = "\(path).relationships.\(name)"
                guard let slot = entity.index(ofProperty: name), let relationship = entity.properties[slot].relationship
                else {
                    let hint = entity.index(ofProperty: name) != nil ? "; it is an attribute" : ""
                    problems.append(.init(at, "entity '\(entity.name)' has no relationship '\(name)'\(hint)"))
                    continue
                }
                if relationship.isToMany {
                    guard let array = value.arrayValue else {
                        problems.append(
                            .init(at, "'\(name)' is to-many: expected an array of ids, found \(value.kindName)"))
                        continue
                    }
                    var ids: [String] = []
                    for (i, element) in array.enumerated() {
                        guard let id = element.stringValue else {
                            problems.append(.init("\(at)[\(i)]", "expected an id string, found \(element.kindName)"))
                            continue
                        }
                        ids.append(id)
                    }
                    object.pendingRelationships[slot] = (ids, at)
                } else {
                    switch value {
                    case .null: object.pendingRelationships[slot] = ([], at)
                    case .string(let id): object.pendingRelationships[slot] = ([id], at)
                    default:
                        problems.append(
                            .init(at, "'\(name)' is to-one: expected an id string or null, found \(value.kindName)"))
                    }
                }
            }
        }
        return (object, id)
    }

    private mutating func resolveReferences() {
        for i in objects.indices {
            let entity = objects[i].entity
            for (slot, pending) in objects[i].pendingRelationships.sorted(by: { $0.key < $1.key }) {
                let relationship = entity.properties[slot].relationship!  // pending slots are relationship slots
                let destination = model.entity(named: relationship.destinationEntityName)
                var members: [Int] = []
                var seen = Set<Int>()
                for (position, id) in pending.ids.enumerated() {
                    let at = relationship.isToMany ? "\(pending.path)[\(position)]" : pending.path
                    guard let target = ids.position(of: id) else {
                        problems.append(.init(at, "no object in the file has id '\(id)'"))
                        continue
                    }
                    if let destination, !objects[target].entity.isKind(of: destination) {
                        problems.append(
                            .init(
                                at,
                                "'\(id)' is a \(objects[target].entity.name), but '\(relationship.name)' holds \(destination.name) objects"
                            ))
                        continue
                    }
                    if seen.insert(target).inserted {
                        members.append(target)
                    } else {
                        problems.append(.init(at, "'\(id)' is listed twice"))
                    }
                }
                objects[i].relationships[slot] = members
            }
            objects[i].pendingRelationships = [:]
        }
    }

    /// Checks that both sides agree where both are given, and derives the sides not given.
    private mutating func mergeInverses() {
        var derived: [Int: [Int: [Int]]] = [:]  // object → inverse slot → sources, in file order
        for (a, object) in objects.enumerated() {
            for (slot, members) in object.relationships.sorted(by: { $0.key < $1.key }) {
                // relationships holds relationship slots
                let relationship = object.entity.properties[slot].relationship!
                guard let inverseName = relationship.inverseName else { continue }
                for b in members {
                    guard let inverseSlot = objects[b].entity.index(ofProperty: inverseName) else { continue }
                    if let given = objects[b].relationships[inverseSlot] {
                        if !given.contains(a) {
                            problems.append(
                                .init(
                                    "\(object.path).relationships.\(relationship.name)",
                                    "'\(ids[a])' points at '\(ids[b])', whose '\(inverseName)' does not point back"
                                ))
                        }
                    } else {
                        derived[b, default: [:]][inverseSlot, default: []].append(a)
                    }
                }
            }
        }
        for (b, slots) in derived {
            for (slot, sources) in slots {
                let relationship = objects[b].entity.properties[slot].relationship!  // derived from an inverse name
                if !relationship.isToMany && sources.count > 1 {
                    let names = sources.map { "'\(ids[$0])'" }.joined(separator: ", ")
                    problems.append(
                        .init(
                            objects[b].path,
                            "'\(ids[b])' is the '\(relationship.inverseName ?? "?")' of \(names), but its '\(relationship.name)' is to-one"
                        ))
                    continue
                }
                objects[b].relationships[slot] = sources
            }
        }
    }
}
