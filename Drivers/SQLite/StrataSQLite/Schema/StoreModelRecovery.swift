import Foundation
import Strata

/// Recovers the model of a Core Data SQLite store without the app's `.momd`: from the embedded
/// model cache when the store has one, otherwise by inference from its tables.
///
/// Thread safety: stateless; each call opens and uses its own connection.
public enum StoreModelRecovery {
    /// Recovers the model of the store at `path`, opened read-only.
    ///
    /// - Throws: ``SQLiteError`` naming the file: cannotOpen, notFound (not a Core Data store),
    ///   corrupt (a model cache that does not decode), unsupported.
    public static func recoverModel(fromStoreAt path: String) throws -> RecoveredModel {
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        defer { connection.close() }
        return try recoverModel(from: connection)
    }

    /// Recovers the model of the store open on `connection`.
    public static func recoverModel(from connection: SQLiteConnection) throws -> RecoveredModel {
        do {
            if let blob = try modelCache(from: connection) {
                // Read-only even from the cache: column suffixes of colliding names are Core Data's
                // private choice, so Strata does not write through a recovered model.
                return RecoveredModel(
                    model: try ModelCacheDecoder.decodeModel(fromModelCache: blob), source: .modelCache,
                    requiresReadOnly: true)
            }
            return RecoveredModel(model: try SchemaInference.inferModel(from: connection), source: .inferred)
        } catch let error as SQLiteError {
            throw error.naming(file: connection.path)
        }
    }

    /// The compressed `Z_MODELCACHE.Z_CONTENT` blob, or `nil` when the store has none (stores
    /// written by Core Data before about framework version 600 do not).
    public static func modelCache(from connection: SQLiteConnection) throws -> Data? {
        guard try connection.tableExists("Z_MODELCACHE") else { return nil }
        guard let blob = try connection.scalar("SELECT Z_CONTENT FROM Z_MODELCACHE LIMIT 1")?.blob, !blob.isEmpty
        else { return nil }
        return blob
    }
}
