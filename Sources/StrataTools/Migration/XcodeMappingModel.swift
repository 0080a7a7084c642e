import Foundation
import Strata
import StrataSQLite
import StrataXML

/// Reads Xcode's mapping models (`.xcmappingmodel`) into ``MappingModel``.
///
/// An `.xcmappingmodel` is a directory holding `xcmapping.xml`: a Core Data XML store of Xcode's
/// own editing objects (`XDDevMappingModel`, `XDDevEntityMapping`, `XDDevAttributeMapping`,
/// `XDDevRelationshipMapping`). The file is opened with the XML driver (on a private copy, so
/// nothing is written beside it) with the model the driver infers from it; customised value
/// expressions are keyed-archived `NSExpression`s, decoded with the SQLite driver's keyed-archive
/// reader. That is why the reader lives here and not in the core, which imports no driver: the
/// core gets plain ``EntityMapping`` values through ``MappingModel/init(entityMappings:)``.
///
/// What is read, per entity mapping (in Xcode's order, `mappingnumber`): the source and
/// destination entity names, the type (`mappingtypename`: Xcode writes `Undefined`, which runs as
/// a transform, an add or a remove by which names are present), the policy class name
/// (`migrationpolicyclassname`, as written: register the policy under that name with
/// ``EntityMigrationPolicy/register(_:forClassName:)``), the filter predicate
/// (`sourcefilterpredicatestring`) and the name (`name`, else Xcode's `<Source>To<Destination>`).
/// Each attribute or relationship mapping gets its written expression (`valueexpressiondata`)
/// when there is one, otherwise Xcode's default: `$source.<name>` for an attribute,
/// `FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:",
/// "<name>", $source.<name>)` for a relationship.
public enum XcodeMappingModel {
    /// The file name inside an `.xcmappingmodel` directory.
    public static let documentName = "xcmapping.xml"

    /// Reads the mapping model at `url`: an `.xcmappingmodel` directory or its `xcmapping.xml`.
    ///
    /// - Throws: ``MigrationError`` naming the file (and the mapping and property) and what to
    ///   do: `.unreadableMapping` for a missing, unreadable, damaged or foreign file or an entry
    ///   that does not parse; `.invalidMapping` for two mappings with one name.
    public static func read(at url: URL) throws -> MappingModel {
        let document = try documentURL(url)
        let shown = document.path
        func invalid(
            _ message: String, code: MigrationError.Code = .unreadableMapping, underlying: (any Error & Sendable)? = nil
        ) -> MigrationError {
            MigrationError(code, "mapping model '\(shown)': \(message)", underlying: underlying)
        }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strata-xcmapping-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        } catch {
            throw invalid(
                "cannot make a scratch directory to read it in (\(error.localizedDescription)); check the temporary directory"
            )
        }
        // Only the private copy is removed; failing to remove it leaves a stray temporary file.
        defer { try? FileManager.default.removeItem(at: scratch) }
        let copy = scratch.appendingPathComponent(documentName)
        do {
            try FileManager.default.copyItem(at: document, to: copy)
        } catch {
            throw invalid("cannot be read (\(error.localizedDescription)); check that the file exists and is readable")
        }
        let rows: [EntityMappingRow]
        do {
            rows = try readRows(copy)
        } catch let error as MigrationError {
            throw invalid(error.message, code: error.code, underlying: error.underlying)
        } catch let error as StoreError {
            throw invalid(
                "is not a readable Core Data XML store (\(error.message)); re-save the mapping model in Xcode or give the .xcmappingmodel Xcode made",
                underlying: error)
        } catch {
            throw invalid("cannot be read (\(error)); re-save it in Xcode", underlying: nil)
        }
        do {
            return try mappingModel(rows)
        } catch let error as MigrationError {
            throw invalid(error.message, code: error.code, underlying: error.underlying)
        }
    }

    /// The `xcmapping.xml` for `url`.
    static func documentURL(_ url: URL) throws -> URL {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw MigrationError(
                .unreadableMapping,
                "no mapping model at '\(url.path)'; give the path of an .xcmappingmodel directory (or the xcmapping.xml inside it)"
            )
        }
        guard isDirectory.boolValue else { return url }
        let document = url.appendingPathComponent(documentName)
        guard FileManager.default.fileExists(atPath: document.path) else {
            throw MigrationError(
                .unreadableMapping,
                "'\(url.path)' holds no \(documentName); give an .xcmappingmodel directory Xcode made")
        }
        return document
    }

    /// One entity mapping as the file holds it.
    struct EntityMappingRow {
        var number: Int
        var name: String?
        var sourceName: String?
        var destinationName: String?
        var typeName: String?
        var policyClassName: String?
        var filter: String?
        var attributes: [PropertyMappingRow]
        var relationships: [PropertyMappingRow]
    }

    /// One attribute or relationship mapping as the file holds it.
    struct PropertyMappingRow {
        var name: String?
        var expression: Data?
    }

    /// Opens the XML store at `url` read-only and reads its entity mappings.
    static func readRows(_ url: URL) throws -> [EntityMappingRow] {
        let type = StoreType.xml
        let options = StoreOptions(isReadOnly: true, createIfMissing: false)
        guard let recovered = try type.factory.recoverModel(at: url, options: options) else {
            throw MigrationError(.unreadableMapping, "is not there any more")
        }
        let model = recovered.model
        func entity(_ name: String) -> EntityDescription? {
            model.entities.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
        }
        guard let mappingEntity = entity("XDDevEntityMapping") else {
            throw MigrationError(
                .unreadableMapping,
                "holds no entity mappings (no XDDevEntityMapping objects); it is not an Xcode mapping model, or Xcode saved it empty"
            )
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: type, at: url, options: options)
        // A read-only store on a private copy: closing it can change nothing that was read.
        defer { try? coordinator.remove(store) }  // read-only: closing changes nothing
        let context = ManagedObjectContext(coordinator: coordinator)
        var rows: [EntityMappingRow] = []
        for object in try context.fetch(FetchRequest(entityName: mappingEntity.name)) {
            let values = Values(object)
            rows.append(
                EntityMappingRow(
                    number: values.integer("mappingnumber") ?? Int.max, name: values.string("name"),
                    sourceName: values.string("sourcename"), destinationName: values.string("destinationname"),
                    typeName: values.string("mappingtypename"),
                    policyClassName: values.string("migrationpolicyclassname"),
                    filter: values.string("sourcefilterpredicatestring"),
                    attributes: values.properties("attributemappings"),
                    relationships: values.properties("relationshipmappings")))
        }
        return rows.sorted {
            ($0.number, $0.sourceName ?? "", $0.destinationName ?? "") < (
                $1.number, $1.sourceName ?? "", $1.destinationName ?? ""
            )
        }
    }

    /// An object's values by the lower-cased names the XML store writes.
    struct Values {
        let object: ManagedObject
        let keys: [String: String]

        init(_ object: ManagedObject) {
            self.object = object
            var keys: [String: String] = [:]
            for name in Array(object.entity.attributesByName.keys) + Array(object.entity.relationshipsByName.keys) {
                keys[name.lowercased()] = name
            }
            self.keys = keys
        }

        func value(_ key: String) -> Any? { keys[key].flatMap { object[$0] } }
        func string(_ key: String) -> String? { (value(key) as? String).flatMap { $0.isEmpty ? nil : $0 } }
        func data(_ key: String) -> Data? { value(key) as? Data }

        func integer(_ key: String) -> Int? {
            switch value(key) {
            case let number as any BinaryInteger: Int(exactly: number)
            case let text as String: Int(text)
            default: nil
            }
        }

        func properties(_ key: String) -> [PropertyMappingRow] {
            guard let name = keys[key], object.entity.relationshipsByName[name] != nil else { return [] }
            return object.objects(forKey: name).map { property in
                let values = Values(property)
                return PropertyMappingRow(name: values.string("name"), expression: values.data("valueexpressiondata"))
            }
            .sorted { ($0.name ?? "") < ($1.name ?? "") }
        }
    }

    /// Xcode's `mappingtypename` values.
    static let typeNames: [String: EntityMappingType] = [
        "undefined": .undefined, "custom": .custom, "add": .add, "remove": .remove, "copy": .copy,
        "transform": .transform,
    ]

    /// The mapping model the rows describe.
    static func mappingModel(_ rows: [EntityMappingRow]) throws -> MappingModel {
        var mappings: [EntityMapping] = []
        for row in rows {
            guard row.sourceName != nil || row.destinationName != nil else {
                throw MigrationError(
                    .unreadableMapping,
                    "entity mapping \(row.number == Int.max ? "without a number" : "number \(row.number)") names neither a source nor a destination entity; fix or delete it in Xcode's mapping editor"
                )
            }
            let name = row.name ?? defaultName(source: row.sourceName, destination: row.destinationName)
            var type = EntityMappingType.undefined
            if let typeName = row.typeName {
                guard let known = typeNames[typeName.lowercased()] else {
                    throw MigrationError(
                        .unreadableMapping,
                        "entity mapping '\(name)' has the type '\(typeName)'; Core Data's types are \(typeNames.keys.sorted().joined(separator: ", "))"
                    )
                }
                type = known
            }
            var filter: FetchPredicate?
            if let text = row.filter {
                do {
                    filter = try FetchPredicate(format: text)
                } catch {
                    throw MigrationError(
                        .unreadableMapping,
                        "entity mapping '\(name)' has a filter predicate that does not parse ('\(text)': \(error)); fix it in Xcode's mapping editor",
                        underlying: error)
                }
            }
            mappings.append(
                EntityMapping(
                    name: name, mappingType: type, sourceEntityName: row.sourceName,
                    destinationEntityName: row.destinationName,
                    attributeMappings: try row.attributes.map {
                        try propertyMapping($0, in: name, isRelationship: false)
                    },
                    relationshipMappings: try row.relationships.map {
                        try propertyMapping($0, in: name, isRelationship: true)
                    },
                    filterPredicate: filter, entityMigrationPolicyClassName: row.policyClassName))
        }
        return try MappingModel(entityMappings: mappings)
    }

    /// Xcode's name for a mapping: `<Source>To<Destination>`, or the one entity named.
    static func defaultName(source: String?, destination: String?) -> String {
        if let source, let destination { return "\(source)To\(destination)" }
        return destination ?? source ?? ""
    }

    static func propertyMapping(_ row: PropertyMappingRow, in mapping: String, isRelationship: Bool) throws
        -> PropertyMapping
    {
        let kind = isRelationship ? "relationship" : "attribute"
        guard let name = row.name else {
            throw MigrationError(
                .unreadableMapping,
                "entity mapping '\(mapping)' has an \(kind) mapping without a name; fix or delete it in Xcode's mapping editor"
            )
        }
        guard ArchivedMappingExpression.isName(name) else {
            throw MigrationError(
                .unreadableMapping,
                "entity mapping '\(mapping)' maps the \(kind) \(ArchivedMappingExpression.quoted(name)), which is not a property name; fix it in Xcode's mapping editor"
            )
        }
        let format: String
        if let data = row.expression {
            do {
                format = try ArchivedMappingExpression.format(data)
            } catch let error as MigrationError {
                throw MigrationError(
                    .unreadableMapping,
                    "the value expression of \(kind) '\(name)' in entity mapping '\(mapping)' \(error.message); rewrite it in Xcode's mapping editor"
                )
            }
        } else {
            format =
                isRelationship
                ? "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \(ArchivedMappingExpression.quoted(name)), $source.\(name))"
                : "$source.\(name)"
        }
        do {
            return try PropertyMapping(name: name, format: format)
        } catch {
            throw MigrationError(
                .unreadableMapping,
                "the value expression of \(kind) '\(name)' in entity mapping '\(mapping)' ('\(format)') does not parse (\(error)); rewrite it in Xcode's mapping editor",
                underlying: error)
        }
    }
}
