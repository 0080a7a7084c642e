import Foundation
import Strata

// Replacing a store in one step, for `strata convert`: the copy is built in a schema of its own,
// verified, and only then moved into the destination's schema in one transaction, so readers see
// the old store or the new one, never a part.

extension PostgreSQLDriverFactory {
    /// A URL naming a new, unused schema beside `url`'s (on the same server and database), where
    /// a store can be built before ``install(_:over:)`` puts it in `url`'s place.
    ///
    /// - Throws: ``StoreError`` `.invalidRequest` for a URL that is not a PostgreSQL store's.
    public static func temporaryLocation(beside url: URL) throws -> URL {
        let location = try PostgreSQLLocation(url: url)
        var prefix = ""
        for character in location.schema {
            guard prefix.utf8.count + String(character).utf8.count <= 36 else { break }
            prefix.append(character)
        }
        let schema = prefix + "__converting_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            throw StoreError(.invalidRequest, "not a store URL", store: url.storeName)
        }
        components.queryItems =
            (components.queryItems ?? []).filter { $0.name.lowercased() != "schema" }
            + [URLQueryItem(name: "schema", value: schema)]
        guard let temporary = components.url else {
            throw StoreError(.invalidRequest, "not a store URL", store: url.storeName)
        }
        return temporary
    }

    /// Moves the store in `temporary`'s schema into `destination`'s schema, replacing the store
    /// there, in one transaction; the temporary schema is dropped.
    ///
    /// The destination's store is every table of its schema whose name starts with `Z` (Core Data's
    /// names; a schema Strata created holds nothing else); other tables stay. The schema is created
    /// when missing, and keeps its owner and privileges.
    ///
    /// - Throws: ``StoreError`` naming the destination; on failure nothing changed.
    public static func install(_ temporary: URL, over destination: URL) throws {
        let source = try PostgreSQLLocation(url: temporary)
        let target = try PostgreSQLLocation(url: destination)
        let store = target.displayName
        do {
            let connection = try PGConnection(parameters: target.connectionParameters)
            defer { connection.close() }
            try connection.executeScript("BEGIN")
            do {
                var lock = PGParameters()
                lock.append(rawText: "strata-create:" + target.schema)
                try connection.execute("SELECT pg_advisory_xact_lock(hashtext($1))", lock)
                try connection.executeScript("CREATE SCHEMA IF NOT EXISTS \(target.schema.sqlName)")
                for table in try tables(in: target.schema, on: connection).sorted() where table.hasPrefix("Z") {
                    try connection.executeScript("DROP TABLE \(target.schema.sqlName).\(table.sqlName) CASCADE")
                }
                for table in try tables(in: source.schema, on: connection).sorted() {
                    try connection.executeScript(
                        "ALTER TABLE \(source.schema.sqlName).\(table.sqlName) SET SCHEMA \(target.schema.sqlName)")
                }
                try connection.executeScript("DROP SCHEMA \(source.schema.sqlName)")
                try connection.executeScript("COMMIT")
            } catch {
                // The error being thrown is the one that counts; the connection is closed anyway.
                if !connection.isBroken { try? connection.executeScript("ROLLBACK") }
                throw error
            }
        } catch let error as PostgreSQLError {
            throw PostgreSQLDriver.storeError(error, action: "installing the converted store", store: store)
        }
    }

    /// Drops `url`'s schema and everything in it (Core Data's `destroyPersistentStore`):
    /// ``removeStore(at:)``.
    public func destroyStore(at url: URL, options: StoreOptions) throws {
        try Self.removeStore(at: url)
    }

    /// Drops `url`'s schema and everything in it (a temporary store that is not needed).
    ///
    /// - Throws: ``StoreError`` naming the store.
    public static func removeStore(at url: URL) throws {
        let location = try PostgreSQLLocation(url: url)
        do {
            let connection = try PGConnection(parameters: location.connectionParameters)
            defer { connection.close() }
            try connection.executeScript("DROP SCHEMA IF EXISTS \(location.schema.sqlName) CASCADE")
        } catch let error as PostgreSQLError {
            throw PostgreSQLDriver.storeError(error, action: "removing the store", store: location.displayName)
        }
    }
}
