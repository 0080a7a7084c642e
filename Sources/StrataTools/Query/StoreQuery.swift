import Foundation
import Strata

/// How `strata query` prints results.
public enum QueryFormat: String, Sendable, CaseIterable {
    case table, json, csv
}

/// A query as the command line states it.
public struct QueryOptions: Sendable {
    /// The entity fetched (subentities included).
    public var entity: String
    /// A predicate in the NSPredicate format language.
    public var predicate: String?
    /// Sort keys: `key[:desc]`, comma-separated, most significant first.
    public var sort: String?
    /// The most objects printed.
    public var limit: Int?
    /// Matching objects skipped first.
    public var offset: Int = 0
    /// The properties printed; every stored property when `nil`.
    public var properties: [String]?
    /// Print the number of matching objects only.
    public var countOnly = false
    /// The output format.
    public var format: QueryFormat = .table
    /// A model for stores without their own.
    public var modelPath: String?
    /// Group key paths (`--group-by`): one output row per distinct combination.
    public var groupBy: [String] = []
    /// Aggregates (`--aggregate`): `count:*`, `sum:age`, `avg:age`, `min:name`, `max:date`.
    public var aggregates: [String] = []
    /// Which groups are printed (`--having`): group key paths and aggregates as `$count`,
    /// `$sum_age` (see ``QueryAggregate/alias``).
    public var having: String?

    /// Creates a query of `entity`.
    public init(entity: String) { self.entity = entity }
}

/// Runs a fetch through a coordinator and formats the objects (`strata query`).
public enum StoreQuery {
    /// Runs the query and returns the text to print.
    ///
    /// - Throws: ``ToolError``: usage for an unknown entity, property or sort key, or a predicate that
    ///   does not parse or fit the entity; failure when the store fails.
    public static func run(_ location: StoreLocation, _ options: QueryOptions) throws -> String {
        let resolved = try StoreOpener.resolveModel(at: location, modelPath: options.modelPath)
        let model = resolved.model
        guard let entity = model.entity(named: options.entity) else {
            throw ToolError.usage(
                "the model has no entity '\(options.entity)'; entities: \(model.entities.map(\.name).joined(separator: ", "))"
            )
        }
        if !options.groupBy.isEmpty || !options.aggregates.isEmpty {
            return try runGrouped(location, options, model: model, entity: entity)
        }
        if options.having != nil {
            throw ToolError.usage("--having filters groups; add --group-by or --aggregate")
        }
        var request = FetchRequest(entityName: entity.name)
        if let text = options.predicate {
            do {
                let predicate = try FetchPredicate(format: text)
                try predicate.validate(for: entity, in: model)
                request.predicate = predicate
            } catch {
                throw ToolError.usage("--where '\(text)': \(error)")
            }
        }
        request.sortKeys = try sortKeys(options.sort, entity: entity, model: model)
        if let limit = options.limit { request.fetchLimit = limit }
        request.fetchOffset = options.offset
        let properties = try selectedProperties(options.properties, entity: entity)

        let (coordinator, _) = try StoreOpener.attach(
            location, model: model, configuration: resolved.configuration, readOnly: true)
        let context = ManagedObjectContext(coordinator: coordinator)
        if options.countOnly {
            var countRequest = request
            countRequest.resultType = .count
            let count = try StoreConverter.read(location) { try context.count(for: countRequest) }
            return options.format == .json ? JSONValue.object([("count", .int(count))]).serialized() : String(count)
        }
        request.fetchBatchSize = 500
        let objects = try StoreConverter.read(location) { try context.fetch(request) }
        let rows = try objects.map { object in try cells(of: object, properties: properties) }
        switch options.format {
        case .json:
            return JSONValue.array(
                zip(objects, rows).map { object, row in
                    .object(
                        [
                            ("id", .string(object.objectID.uriRepresentation().absoluteString)),
                            ("entity", .string(object.entity.name)),
                        ]
                            + zip(properties, row).map { (outputName($0.name), $1) })
                }
            ).serialized()
        case .csv:
            var lines = [
                (["id", "entity"] + properties.map { outputName($0.name) }).map(csvField).joined(separator: ",")
            ]
            for (object, row) in zip(objects, rows) {
                let fields =
                    [object.objectID.uriRepresentation().absoluteString, object.entity.name]
                    + row.map { text($0, empty: "") }
                lines.append(fields.map(csvField).joined(separator: ","))
            }
            return lines.joined(separator: "\n")
        case .table:
            var table = TextTable(headers: ["id"] + properties.map { outputName($0.name) })
            for (object, row) in zip(objects, rows) {
                table.append([object.objectID.uriRepresentation().absoluteString] + row.map { text($0, empty: "nil") })
            }
            return (table.lines + ["(\(objects.count) object\(objects.count == 1 ? "" : "s"))"]).joined(separator: "\n")
        }
    }

    /// The output key of a property: its name, or `_id` / `_entity` for a property whose name is
    /// one of the keys every row already has (Core Data models often have an `id` attribute).
    static func outputName(_ name: String) -> String {
        name == "id" || name == "entity" ? "_" + name : name
    }

    /// Parses `name,age:desc,department.name:asc`, checking each key path against the entity.
    static func sortKeys(_ text: String?, entity: EntityDescription, model: ManagedObjectModel) throws -> [SortKey] {
        guard let text, !text.isEmpty else { return [] }
        return try text.split(separator: ",").map { part in
            let pieces = part.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            let keyPath = pieces[0]
            var ascending = true
            if pieces.count == 2 {
                switch pieces[1].lowercased() {
                case "asc": ascending = true
                case "desc": ascending = false
                default: throw ToolError.usage("--sort '\(part)': the order must be asc or desc")
                }
            }
            var current = entity
            let components = keyPath.split(separator: ".").map(String.init)
            var index = 0
            while index < components.count {
                // A composite's element (`location.latitude`) spans several components.
                guard let (slot, used) = current.slot(forComponents: components, from: index) else {
                    if current.isComposite(components[index]) {
                        throw ToolError.usage(
                            "--sort '\(keyPath)': '\(components[index])' of entity '\(current.name)' is a composite attribute; sort by one of its elements (\(current.properties.map(\.name).filter { $0.hasPrefix(components[index] + ".") }.joined(separator: ", ")))"
                        )
                    }
                    throw ToolError.usage(
                        "--sort '\(keyPath)': entity '\(current.name)' has no property '\(components[index])'")
                }
                let property = current.properties[slot]
                let component = property.name
                index += used
                if index < components.count {
                    guard let relationship = property.relationship, !relationship.isToMany,
                        let next = model.entity(named: relationship.destinationEntityName)
                    else { throw ToolError.usage("--sort '\(keyPath)': '\(component)' is not a to-one relationship") }
                    current = next
                } else if property.attribute == nil {
                    throw ToolError.usage(
                        "--sort '\(keyPath)': '\(component)' is a relationship; sort by one of its attributes")
                }
            }
            return SortKey(keyPath, ascending: ascending)
        }
    }

    static func selectedProperties(_ names: [String]?, entity: EntityDescription) throws -> [PropertyDescription] {
        // Without names: every stored slot, so a composite shows one column per element (`location.latitude`).
        guard let names else { return entity.properties.filter { !$0.isTransient } }
        return try names.map { name in
            if entity.property(named: name) == nil, let composite = entity.compositeAttribute(atKeyPath: name) {
                var named = composite
                named.name = name  // a nested composite is printed under its key path
                return .attribute(named)
            }
            guard let property = entity.property(named: name) else {
                throw ToolError.usage(
                    "--properties: entity '\(entity.name)' has no property '\(name)'; it has \(entity.properties.map(\.name).joined(separator: ", "))"
                )
            }
            return property
        }
    }

    /// The JSON form of each selected property: attributes per the interchange format,
    /// relationships as object URIs.
    static func cells(of object: ManagedObject, properties: [PropertyDescription]) throws -> [JSONValue] {
        try properties.map { property in
            switch property {
            case .attribute(let attribute) where attribute.isComposite:
                return try compositeJSON(of: object, attribute, at: attribute.name)
            case .attribute(let attribute):
                return InterchangeValue.json(try object.storeValue(forKey: attribute.name))
            case .relationship(let relationship):
                let uris = object.objectIDs(forRelationshipNamed: relationship.name).map {
                    JSONValue.string($0.uriRepresentation().absoluteString)
                }
                return relationship.isToMany ? .array(uris) : (uris.first ?? .null)
            }
        }
    }

    /// A composite as the interchange format writes it: an object of its elements, or `null`.
    static func compositeJSON(of object: ManagedObject, _ composite: AttributeDescription, at keyPath: String) throws
        -> JSONValue
    {
        var members: [(String, JSONValue)] = []
        var present = false
        for element in composite.elements {
            let path = keyPath + "." + element.name
            let value =
                element.isComposite
                ? try compositeJSON(of: object, element, at: path)
                : InterchangeValue.json(try object.storeValue(forKey: path))
            if case .null = value {} else { present = true }
            members.append((element.name, value))
        }
        return present ? .object(members) : .null
    }

    static func text(_ value: JSONValue, empty: String) -> String {
        switch value {
        case .null: return empty
        case .bool(let b): return b ? "true" : "false"
        case .number(let n): return n
        case .string(let s): return s
        case .array(let items): return items.map { text($0, empty: empty) }.joined(separator: " ")
        case .object: return value.serialized(pretty: false)
        }
    }

    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
