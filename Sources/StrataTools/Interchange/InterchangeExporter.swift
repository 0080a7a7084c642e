import Foundation
import Strata

/// Writes a store as the JSON interchange format (docs/formats/json.md), streaming: the header,
/// then one object per line, read from the driver in batches.
///
/// Object `id`s are object URIs (`x-coredata://<store UUID>/<Entity>/p<key>`); both sides of every
/// relationship are written, limited to the exported entities.
public enum InterchangeExporter {
    /// What was written.
    public struct Summary: Sendable {
        /// Objects written per entity, in model order.
        public var counts: [(entity: String, count: Int)] = []
        /// All objects written.
        public var total: Int { counts.reduce(0) { $0 + $1.count } }
    }

    /// Exports `location`.
    ///
    /// - Parameters:
    ///   - entities: Entity names to export, each with its subentities; empty for every entity.
    ///   - modelPath: A model for stores without their own.
    ///   - write: Receives the text in pieces.
    /// - Throws: ``ToolError``: usage for an unknown entity or a missing store; failure when the
    ///   driver fails.
    @discardableResult
    public static func export(
        from location: StoreLocation, entities names: [String] = [], modelPath: String? = nil,
        write: (String) throws -> Void
    ) throws -> Summary {
        let resolved = try StoreOpener.resolveModel(at: location, modelPath: modelPath)
        let model = resolved.model
        var selected = Set<Int32>()
        for name in names {
            guard let entity = model.entity(named: name) else {
                throw ToolError.usage(
                    "the model has no entity '\(name)'; entities: \(model.entities.map(\.name).joined(separator: ", "))"
                )
            }
            selected.formUnion(entity.hierarchyNumbers)
        }
        let held = Set(try model.entities(forConfiguration: resolved.configuration).map(\.entityNumber))
        if names.isEmpty { selected = held } else { selected.formIntersection(held) }
        let driver = try StoreOpener.openDriver(
            location, model: model, configuration: resolved.configuration, readOnly: true)
        defer { try? driver.close() }
        let metadata = try StoreConverter.read(location) { try driver.loadMetadata() }
        let uuid = metadata.uuid
        func uri(_ id: RowID) -> String {
            "x-coredata://\(uuid)/\(model.entity(number: id.entity)?.name ?? "?")/p\(id.primaryKey)"
        }
        let header: JSONValue = .object([
            ("format", .string("strata-json")), ("version", .int(1)),
            (
                "model",
                .object([("versionHash", .string(model.versionHash.hexString)), ("source", .string(resolved.source))])
            ),
            ("store", .object([("uuid", .string(uuid)), ("driver", .string(location.scheme.driverName))])),
        ])
        var text = header.serialized(pretty: false)
        text.removeLast()  // the closing brace; objects follow
        try write(text + ",\"objects\":[")
        var summary = Summary()
        var first = true
        let stream = RowStream(driver: driver)
        for entity in model.entities where selected.contains(entity.entityNumber) {
            var count = 0
            try StoreConverter.read(location) {
                try stream.forEachBatch(of: entity) { rows in
                    var chunk = ""
                    for row in rows {
                        chunk +=
                            (first ? "\n" : ",\n")
                            + object(row, entity: entity, model: model, selected: selected, uri: uri).serialized(
                                pretty: false)
                        first = false
                    }
                    count += rows.count
                    try write(chunk)
                }
            }
            summary.counts.append((entity.name, count))
        }
        try write("\n]}\n")
        return summary
    }

    /// Exports `location` to the file at `path`: written beside it and put in its place only when
    /// complete (``FileReplacement``), so a failure or a kill leaves the old file or the new one.
    ///
    /// - Throws: What ``export(from:entities:modelPath:write:)`` throws; ``ToolError`` (failure)
    ///   when the file cannot be written. The file at `path` is then as it was.
    @discardableResult
    public static func export(
        from location: StoreLocation, entities names: [String] = [], modelPath: String? = nil, toFile path: String
    ) throws -> Summary {
        let file = try ReplacingFileWriter(path: path)
        do {
            let summary = try export(from: location, entities: names, modelPath: modelPath) { try file.write($0) }
            try file.commit()
            return summary
        } catch {
            file.discard()
            throw error
        }
    }

    /// A composite's value: an object of its elements (nested composites as objects, `nil`
    /// elements as `null`), or `null` when every element is `nil`.
    static func compositeJSON(
        _ composite: AttributeDescription, at keyPath: String, _ row: RowSnapshot, _ entity: EntityDescription
    ) -> JSONValue {
        var members: [(String, JSONValue)] = []
        var present = false
        for element in composite.elements {
            let path = keyPath + "." + element.name
            let value: JSONValue
            if element.isComposite {
                value = compositeJSON(element, at: path, row, entity)
            } else {
                value = entity.index(ofProperty: path).map { InterchangeValue.json(row.values[$0]) } ?? .null
            }
            if case .null = value {} else { present = true }
            members.append((element.name, value))
        }
        return present ? .object(members) : .null
    }

    /// One object of the interchange format.
    static func object(
        _ row: RowSnapshot, entity: EntityDescription, model: ManagedObjectModel, selected: Set<Int32>,
        uri: (RowID) -> String
    ) -> JSONValue {
        var attributes: [(String, JSONValue)] = []
        var relationships: [(String, JSONValue)] = []
        var composites: Set<String> = []
        for (slot, property) in entity.properties.enumerated() where !property.isTransient {
            let value = row.values[slot]
            switch property {
            case .attribute(let attribute):
                // A composite's elements (`location.latitude`) are written once, as the composite's object.
                if let dot = attribute.name.firstIndex(of: ".") {
                    let name = String(attribute.name[..<dot])
                    if composites.insert(name).inserted, let composite = entity.compositeAttribute(atKeyPath: name) {
                        attributes.append((name, compositeJSON(composite, at: name, row, entity)))
                    }
                    continue
                }
                attributes.append((attribute.name, InterchangeValue.json(value)))
            case .relationship(let relationship):
                guard let destination = model.entity(named: relationship.destinationEntityName),
                    !selected.isDisjoint(with: destination.hierarchyNumbers)
                else { continue }
                switch value {
                case .reference(let id): relationships.append((relationship.name, .string(uri(id))))
                case .references(let ids):
                    relationships.append((relationship.name, .array(ids.map { .string(uri($0)) })))
                default: relationships.append((relationship.name, relationship.isToMany ? .array([]) : .null))
                }
            }
        }
        return .object([
            ("entity", .string(entity.name)), ("id", .string(uri(row.id))), ("attributes", .object(attributes)),
            ("relationships", .object(relationships)),
        ])
    }
}
