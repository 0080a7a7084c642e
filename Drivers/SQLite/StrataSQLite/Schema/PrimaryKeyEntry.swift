import Foundation

/// One row of a Core Data store's `Z_PRIMARYKEY` table: an entity's number, name, parent and
/// last used primary key.
public struct PrimaryKeyEntry: Sendable, Hashable {
    /// `Z_ENT`: the entity's number (16000 and above are Core Data's system tables).
    public var entityNumber: Int32
    /// `Z_NAME`: the entity's name as in the model.
    public var name: String
    /// `Z_SUPER`: the parent entity's number, 0 for roots.
    public var superNumber: Int32
    /// `Z_MAX`: the last primary key used (advanced on the hierarchy's root only).
    public var maximumPrimaryKey: Int64

    /// Creates an entry.
    public init(entityNumber: Int32, name: String, superNumber: Int32, maximumPrimaryKey: Int64) {
        self.entityNumber = entityNumber
        self.name = name
        self.superNumber = superNumber
        self.maximumPrimaryKey = maximumPrimaryKey
    }

    /// Whether the row describes a model entity rather than a system table (persistent history
    /// uses 16001+, CloudKit mirroring 17000+).
    public var isModelEntity: Bool { entityNumber > 0 && entityNumber < 16000 }

    /// Reads every row of `Z_PRIMARYKEY`, ordered by entity number.
    ///
    /// - Throws: ``SQLiteError`` (notFound) when the table is missing: the file is not a Core Data store.
    public static func read(from connection: SQLiteConnection) throws -> [PrimaryKeyEntry] {
        guard try connection.tableExists("Z_PRIMARYKEY") else {
            throw SQLiteError(
                .notFound, "no Z_PRIMARYKEY table: not a Core Data SQLite store", file: connection.path)
        }
        let statement = try connection.prepare("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        var entries: [PrimaryKeyEntry] = []
        while try statement.step() {
            let number = statement.int64(at: 0)
            guard let name = statement.string(at: 1), !name.isEmpty, let entity = Int32(exactly: number),
                let parent = Int32(exactly: statement.int64(at: 2))
            else {
                throw SQLiteError(.corrupt, "Z_PRIMARYKEY row \(number) is malformed", file: connection.path)
            }
            entries.append(
                PrimaryKeyEntry(
                    entityNumber: entity, name: name, superNumber: parent, maximumPrimaryKey: statement.int64(at: 3)))
        }
        return entries
    }
}
