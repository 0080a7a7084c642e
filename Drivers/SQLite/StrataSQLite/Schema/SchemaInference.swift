import Foundation
import Strata

/// Infers an approximate model from the tables of a Core Data SQLite store that has no model
/// cache (stores written before about framework version 600).
///
/// What the tables tell, and the heuristics used (docs/formats/sqlite-model-cache.md, "Inference"):
///
/// - Entities, their numbers and inheritance come from `Z_PRIMARYKEY` (exact). Rows numbered
///   16000 and above are system tables and are left out.
/// - Each hierarchy's columns live in its root's table `Z<ROOT>`; every inferred property is
///   declared on the root, since the tables do not say which subentity owns a column.
/// - Property names are column names without the leading `Z` (`ZDISPLAYORDER` → `DISPLAYORDER`):
///   Core Data upper-cases names, so the original case cannot be known.
/// - Attribute types come from declared column types: INTEGER → Integer 64 (Booleans and 16/32-bit
///   integers look alike), FLOAT → Double, TIMESTAMP → Date, VARCHAR → String, BLOB → Binary
///   (UUID and transformable values look alike), DECIMAL → Decimal. All are optional.
/// - An INTEGER column is a to-one relationship when a `Z<n>_<COL>` column names its destination
///   entity `n`, or when it has Core Data's foreign-key index `<TABLE>_<COL>_INDEX` and its name
///   identifies one destination entity (``destination(forColumn:in:among:)``). Otherwise it stays
///   an integer attribute. Delete rules are unknown and set to nullify.
/// - Two to-one relationships pointing at each other's entities become inverses (one-to-one) when
///   they pair up unambiguously. One-to-many relationships keep no inverse: the to-many side
///   leaves no trace in the tables.
/// - A join table `Z_<n><NAME>` with columns `Z_<n1><NAME1>` and `Z_<n2><NAME2>` gives a
///   many-to-many pair: entity `n1` has `NAME2` → `n2`, entity `n2` has `NAME1` → `n1`, inverses
///   (a numeric suffix Core Data added is dropped when the table's name shows it; `Z_FOK_`
///   columns make a side ordered). Columns `Z_<n><NAME>` and `REFLEXIVE` give a relationship
///   `NAME` of entity `n` that is its own inverse.
/// - A column `Z<n><NAME>` (digits right after the `Z`) is Core Data's foreign key of a to-many
///   without inverse: entity `n` has `NAME` → the table's root, ordered when `Z_FOK_<n><NAME>`
///   is there too.
/// - Other columns starting `Z_` (besides `Z_PK`, `Z_ENT`, `Z_OPT` and `Z_FOK_` order columns)
///   are properties whose names start with `_` (`Z_PK1` → `_PK1`).
///
/// Thread safety: stateless.
public enum SchemaInference {
    /// Infers a model from the store open on `connection`.
    ///
    /// - Returns: A model whose entity numbers equal the store's `Z_ENT` values.
    /// - Throws: ``SQLiteError`` naming the file: notFound without `Z_PRIMARYKEY`, corrupt for an
    ///   inconsistent entity table (unknown parent, inheritance cycle).
    public static func inferModel(from connection: SQLiteConnection) throws -> ManagedObjectModel {
        let entries = try PrimaryKeyEntry.read(from: connection).filter(\.isModelEntity)
        guard !entries.isEmpty else {
            throw SQLiteError(.notFound, "Z_PRIMARYKEY lists no entities", file: connection.path)
        }
        for entry in entries where !ManagedObjectModel.isValidName(entry.name) {
            throw SQLiteError(
                .corrupt,
                "Z_PRIMARYKEY row \(entry.entityNumber) names entity \(SQLIdentifier.display(entry.name)), which is not an identifier, so Core Data did not write it; open the store with the model that wrote it",
                file: connection.path)
        }
        let byNumber = Dictionary(entries.map { ($0.entityNumber, $0) }) { first, _ in first }
        var parents: [String: String] = [:]
        for entry in entries where entry.superNumber != 0 {
            guard let parent = byNumber[entry.superNumber] else {
                throw SQLiteError(
                    .corrupt, "entity '\(entry.name)' has parent number \(entry.superNumber), which Z_PRIMARYKEY lacks",
                    file: connection.path)
            }
            parents[entry.name] = parent.name
        }
        var properties: [String: [PropertyDescription]] = [:]
        let names = entries.map(\.name)
        var owned: [OwnedToMany] = []
        // Roots take table names in Z_ENT order, suffixed on collisions, as the layout gives them.
        var tableNames = NameGenerator(reserved: NameGenerator.systemTables)
        for entry in entries where entry.superNumber == 0 {
            let table = try inferTableProperties(
                root: entry.name, table: tableNames.unique("Z" + entry.name.uppercased()), entities: names,
                byNumber: byNumber, connection: connection)
            properties[entry.name] = table.properties
            owned += table.owned
        }
        pairOneToOneInverses(&properties)
        try addManyToMany(&properties, byNumber: byNumber, parents: parents, connection: connection)
        for var toMany in owned {
            // byNumber holds every number inferTableProperties accepted.
            guard let entity = byNumber[toMany.entityNumber]?.name,
                let name = Self.available(toMany.relationship.name, inHierarchyOf: entity, properties, parents)
            else { continue }
            toMany.relationship.name = name
            properties[entity, default: []].append(.relationship(toMany.relationship))
        }
        let entities = entries.map { entry in
            EntityDescription(entry.name, parent: parents[entry.name], properties: properties[entry.name] ?? [])
        }
        do {
            return try ManagedObjectModel(entities: entities)
        } catch let error as ModelError {
            throw SQLiteError(
                .corrupt,
                "the store's tables describe a model Strata rejects (\(error.message)); open the store with the model that wrote it",
                file: connection.path, underlying: error)
        }
    }

    /// The attribute type Core Data stores in a column declared `declaredType`.
    public static func attributeType(forColumnType declaredType: String) -> AttributeType {
        let type = declaredType.uppercased()
        if type.hasPrefix("TIMESTAMP") { return .date }
        if type.hasPrefix("DECIMAL") { return .decimal }
        if type.contains("INT") { return .integer64 }
        if type.contains("CHAR") || type.contains("TEXT") || type.contains("CLOB") { return .string }
        if type.contains("FLOA") || type.contains("DOUB") || type.contains("REAL") { return .double }
        return .binaryData
    }

    /// The entity a foreign-key column named `column` (without its `Z`) of `root`'s table points
    /// at, or `nil` when the name does not single one out.
    ///
    /// Tried in order, each accepted only when it matches exactly one entity: the column names an
    /// entity (`RECIPE` → Recipe); the root's name followed by the column names one (`EXTRA` in
    /// KikChat → KikChatExtra); the column ends with an entity's name, longest first
    /// (`LASTMESSAGE` → KikMessage). Names are compared upper-cased and also without the prefix
    /// all entity names share (`Kik`).
    public static func destination(forColumn column: String, in root: String, among entities: [String]) -> String? {
        let prefix = commonPrefix(entities)
        func forms(_ name: String) -> [String] {
            let upper = name.uppercased()
            let short = String(name.dropFirst(prefix.count)).uppercased()
            return short.isEmpty || short == upper ? [upper] : [upper, short]
        }
        let column = column.uppercased()
        let exact = entities.filter { forms($0).contains(column) }
        if exact.count == 1 { return exact[0] }
        let rootForms = forms(root)
        let composed = entities.filter { entity in
            rootForms.contains { forms(entity).contains($0 + column) }
        }
        if composed.count == 1 { return composed[0] }
        var best: (name: String, length: Int, count: Int)?
        for entity in entities {
            for form in forms(entity) where column.hasSuffix(form) {
                if let current = best, current.length > form.count { continue }
                if let current = best, current.length == form.count, current.name != entity {
                    best = (entity, form.count, current.count + 1)
                } else if best?.name != entity || best?.length != form.count {
                    best = (entity, form.count, 1)
                }
            }
        }
        if let best, best.count == 1 { return best.name }
        return nil
    }

    /// The prefix all names share, cut back to an upper-case boundary ("Kik" of "KikChat", "KikUser").
    static func commonPrefix(_ names: [String]) -> String {
        guard names.count > 1, var prefix = names.first else { return "" }
        for name in names.dropFirst() {
            while !name.hasPrefix(prefix) { prefix.removeLast() }
        }
        while !prefix.isEmpty, !names.allSatisfy({ $0.dropFirst(prefix.count).first?.isUppercase ?? false }) {
            prefix.removeLast()
        }
        return prefix
    }
}
