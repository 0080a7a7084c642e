import Foundation
import Strata

/// Infers a model from an XML store, for opening a store whose model is not at hand.
///
/// What the file tells, and the choices made (docs/formats/xml.md, "Opening without a model"):
/// - One entity per distinct object `type`, and one per relationship `destination` that no object
///   has (Core Data writes every relationship, empty ones too, with its destination): such an
///   entity has no known attributes. Core Data writes names upper-cased; the original case
///   is taken from the metadata's `NSStoreModelVersionHashes` keys when they name the entity,
///   otherwise the name stays as written.
/// - Properties are the attribute and relationship names seen on that entity's objects (lower-
///   cased, as written; the original case is lost). Attribute types come from `type`
///   (`transformable` becomes Binary: the transformer is unknown). Every attribute is optional.
/// - A relationship is to-one when its `type` is `m/1`, to-many otherwise; its minimum count is
///   kept when every object satisfies it, else 0. Order cannot be told apart: to-many
///   relationships are inferred unordered. Delete rules are nullify.
/// - Two relationships are inverses when each is the other's only relationship whose pairs mirror
///   its own exactly (b ∈ a.r ⇔ a ∈ b.s).
/// - A relationship's destination is the first `destination` written for it, else the entity of the
///   objects its idrefs name.
/// - Inheritance shows only where a relationship's destination has no objects and its idrefs name
///   objects of other entities (the declared destination is their superentity, as Strata and
///   Cocotron write it): those entities become its subentities. Any other idref naming an object
///   of another entity than the destination, or an entity that would need two parents, is refused
///   as unsupported.
///
/// Thread safety: stateless.
enum XMLModelInference {
    private struct Property {
        var name: String
        var isRelationship: Bool
        var attributeType: AttributeType?
        var destination: String?
        var minCount = 0
        var maxCount = 0
        var objects = 0
        var fewest = Int.max
        var pairs: [(Int64, Int64)] = []
        var line: Int
    }

    private struct Entity {
        var name: String
        var properties: [String: Property] = [:]
        var order: [String] = []
        var objects = 0
    }

    /// Infers the model of the store at `path`.
    ///
    /// - Throws: ``StoreError/Code/corrupt`` for a malformed file or contradictory declarations,
    ///   ``StoreError/Code/unsupported`` for what a model cannot express without inheritance.
    static func inferModel(path: String) throws -> ManagedObjectModel {
        var entities: [String: Entity] = [:]
        var order: [String] = []
        var types: [Int64: String] = [:]
        let info = try XMLDocumentScanner(path: path).scan { raw in
            let key = raw.type.uppercased()
            if entities[key] == nil {
                entities[key] = Entity(name: raw.type)
                order.append(key)
            }
            types[raw.id] = key
            try record(raw, into: &entities[key]!, path: path)  // created above
        }
        var names: [String: String] = [:]
        if case .dictionary(let metadata)? = info.metadata,
            case .dictionary(let hashes)? = metadata[XMLMetadataCoding.hashesKey]
        {
            for name in hashes.keys { names[name.uppercased()] = name }
        }
        // Entities seen only as destinations: known by name, their attributes unknown.
        let objectEntities = order
        for key in objectEntities {
            for property in entities[key]!.properties.values where property.isRelationship {  // keys from order
                guard let declared = property.destination, entities[declared.uppercased()] == nil else { continue }
                entities[declared.uppercased()] = Entity(name: declared)
                order.append(declared.uppercased())
            }
        }
        func entityName(_ key: String) -> String { names[key] ?? entities[key]?.name ?? key }
        // Destinations: checked against the objects named; superentities read from them.
        var parents: [String: String] = [:]
        for key in objectEntities {
            for propertyName in entities[key]!.order {  // keys from order
                var property = entities[key]!.properties[propertyName]!  // recorded with its name
                guard property.isRelationship else { continue }
                let targetTypes = Set(property.pairs.compactMap { types[$0.1] })
                let what = "relationship '\(property.name)' of \(entityName(key))"
                guard let destination = property.destination?.uppercased() ?? targetTypes.first else {
                    throw unsupported(
                        "\(what) has no destination and no ids in any object, so its entity is not in the file; open it with its model",
                        path: path, line: property.line)
                }
                if entities[destination]!.objects == 0, !targetTypes.isEmpty {  // every destination was added above
                    // A destination without objects holding objects of other entities: their superentity.
                    for child in targetTypes.sorted() {
                        if let parent = parents[child], parent != destination {
                            throw unsupported(
                                "\(what) names \(entityName(child)) objects as \(entityName(destination))s, but another relationship names them as \(entityName(parent))s: an entity cannot have two superentities; open it with its model",
                                path: path, line: property.line)
                        }
                        parents[child] = destination
                    }
                } else if targetTypes.count > 1 || (!targetTypes.isEmpty && targetTypes.first != destination) {
                    throw unsupported(
                        "\(what) names objects of several entities (\(targetTypes.sorted().joined(separator: ", "))); inheritance cannot be inferred from an XML store, so open it with its model",
                        path: path, line: property.line)
                }
                property.destination = destination
                entities[key]!.properties[propertyName] = property
            }
        }
        let inverses = pairInverses(entities, order: order)
        var descriptions: [EntityDescription] = []
        for key in order {
            let entity = entities[key]!  // keys from order
            let properties = entity.order.map { name -> PropertyDescription in
                let property = entity.properties[name]!  // recorded with its name
                if !property.isRelationship {
                    return .attribute(property.name, property.attributeType ?? .string)
                }
                let everyObject = property.objects == entity.objects ? property.fewest : 0
                let minimum = min(property.minCount, everyObject)
                let toMany = property.maxCount != 1
                return .relationship(
                    RelationshipDescription(
                        property.name, destination: entityName(property.destination!),
                        inverse: inverses["\(key).\(name)"],  // set above
                        toMany: toMany, isOptional: minimum == 0, minCount: minimum, maxCount: property.maxCount))
            }
            descriptions.append(
                EntityDescription(
                    entityName(key), parent: parents[key].map(entityName), properties: regroupingComposites(properties))
            )
        }
        do {
            return try ManagedObjectModel(entities: descriptions)
        } catch {
            throw StoreError(.corrupt, "the objects of the file describe a model Strata rejects: \(error)", store: path)
        }
    }

    /// Attributes named by key path (`location.latitude`, how Strata writes a composite's
    /// elements) become composite attributes again, each at the place of its first element.
    static func regroupingComposites(_ properties: [PropertyDescription]) -> [PropertyDescription] {
        // Names with more parts than any model nests are left alone (the model then refuses them).
        func parts(_ property: PropertyDescription) -> [String]? {
            guard case .attribute(let a) = property, a.name.contains(".") else { return nil }
            let parts = a.name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            return parts.count <= 16 ? parts : nil
        }
        guard properties.contains(where: { parts($0) != nil }) else { return properties }
        func group(_ entries: [(path: ArraySlice<String>, attribute: AttributeDescription)]) -> [AttributeDescription] {
            var order: [String] = []
            var members: [String: [(path: ArraySlice<String>, attribute: AttributeDescription)]] = [:]
            for entry in entries {
                let head = entry.path.first ?? ""
                if members[head] == nil { order.append(head) }
                members[head, default: []].append((entry.path.dropFirst(), entry.attribute))
            }
            return order.flatMap { head -> [AttributeDescription] in
                let inner = members[head] ?? []
                let leaves = inner.filter(\.path.isEmpty).map { entry -> AttributeDescription in
                    var leaf = entry.attribute
                    leaf.name = head
                    return leaf
                }
                let nested = inner.filter { !$0.path.isEmpty }
                return leaves + (nested.isEmpty ? [] : [.composite(head, elements: group(nested))])
            }
        }
        var result: [PropertyDescription] = []
        var placed: Set<String> = []
        for property in properties {
            guard let path = parts(property), let head = path.first else {
                result.append(property)
                continue
            }
            guard placed.insert(head).inserted else { continue }
            let entries = properties.compactMap {
                other -> (path: ArraySlice<String>, attribute: AttributeDescription)? in
                guard let path = parts(other), path.first == head, case .attribute(let a) = other else { return nil }
                return (path[...], a)
            }
            result += group(entries).map { .attribute($0) }
        }
        return result
    }

    private static func record(_ raw: XMLRawObject, into entity: inout Entity, path: String) throws {
        entity.objects += 1
        var counted: Set<String> = []
        for written in raw.properties {
            let key = written.name.lowercased()
            var property =
                entity.properties[key]
                ?? Property(name: written.name, isRelationship: written.isRelationship, line: written.line)
            if entity.properties[key] == nil { entity.order.append(key) }
            guard property.isRelationship == written.isRelationship else {
                throw corrupt(
                    "expected '\(written.name)' of \(entity.name) to be a\(property.isRelationship ? " relationship" : "n attribute") as on line \(property.line)",
                    path: path, line: written.line)
            }
            if counted.insert(key).inserted { property.objects += 1 }
            if written.isRelationship {
                let (minimum, maximum) = try counts(written, path: path)
                if property.pairs.isEmpty && property.fewest == .max {
                    (property.minCount, property.maxCount) = (minimum, maximum)
                }
                if let destination = written.destination {
                    if let known = property.destination, known.uppercased() != destination.uppercased() {
                        throw corrupt(
                            "expected destination '\(known)' for '\(written.name)' of \(entity.name) as before, found '\(destination)'",
                            path: path, line: written.line)
                    }
                    property.destination = property.destination ?? destination
                }
                property.fewest = min(property.fewest, written.idrefs.count)
                for target in written.idrefs { property.pairs.append((raw.id, target)) }
            } else {
                guard let typeName = written.type, let type = XMLValueCoding.attributeType(named: typeName) else {
                    throw corrupt(
                        "expected an attribute type (string, int16, int32, int64, bool, float, double, decimal, date, binary, uuid, uri, transformable) on '\(written.name)', found '\(written.type ?? "none")'",
                        path: path, line: written.line)
                }
                if let known = property.attributeType, known != type {
                    throw corrupt(
                        "expected '\(written.name)' of \(entity.name) to be \(known.xcodeName) as on line \(property.line), found \(typeName)",
                        path: path, line: written.line)
                }
                property.attributeType = type
            }
            entity.properties[key] = property
        }
    }

    private static func counts(_ written: XMLRawProperty, path: String) throws -> (Int, Int) {
        guard let type = written.type else { return (0, 0) }  // no declared counts: optional to-many
        let parts = type.split(separator: "/")
        guard parts.count == 2, let minimum = Int(parts[0]), let maximum = Int(parts[1]), minimum >= 0, maximum >= 0
        else {
            throw corrupt(
                "expected a relationship type like \"0/1\" (minimum/maximum count) on '\(written.name)', found \"\(type)\"",
                path: path, line: written.line)
        }
        return (minimum, maximum)
    }

    /// "ENTITY.name" → inverse name, for relationships whose pairs mirror exactly one other's.
    private static func pairInverses(_ entities: [String: Entity], order: [String]) -> [String: String] {
        struct Candidate {
            var key: String
            var entity: String
            var name: String
            var destination: String
            var pairs: Set<Pair>
        }
        struct Pair: Hashable {
            var a: Int64
            var b: Int64
        }
        var candidates: [Candidate] = []
        for key in order {
            for (name, property) in entities[key]!.properties where property.isRelationship {  // keys from order
                candidates.append(
                    Candidate(
                        // set by inferModel
                        key: "\(key).\(name)", entity: key, name: name, destination: property.destination!,
                        pairs: Set(property.pairs.map { Pair(a: $0.0, b: $0.1) })))
            }
        }
        func mirrors(_ r: Candidate) -> [Candidate] {
            let mirrored = Set(r.pairs.map { Pair(a: $0.b, b: $0.a) })
            return candidates.filter {
                $0.entity == r.destination && $0.destination == r.entity && $0.key != r.key && !r.pairs.isEmpty
                    && $0.pairs == mirrored
            }
        }
        var result: [String: String] = [:]
        for candidate in candidates {
            let matches = mirrors(candidate)
            guard matches.count == 1, let other = matches.first else { continue }
            let back = mirrors(other)
            guard back.count == 1, back[0].key == candidate.key else { continue }
            result[candidate.key] = other.name
        }
        return result
    }

    private static func corrupt(_ message: String, path: String, line: Int) -> StoreError {
        XMLStreamReader.corrupt(message, path: path, line: line, column: 1)
    }

    private static func unsupported(_ message: String, path: String, line: Int) -> StoreError {
        StoreError(.unsupported, "\(path):\(line): \(message)", store: path)
    }
}
