import CLibPQ
import Foundation
import Strata

/// Opens PostgreSQL stores (``StoreType/postgreSQL``) named by `postgres://` URLs
/// (``PostgreSQLLocation``).
///
/// A schema without a store is given Core Data's tables for the request's model (creating the
/// schema when needed), under an advisory lock so processes opening a new store together create it
/// once. An existing store is matched against the model: every entity must have its
/// `Z_PRIMARYKEY` row with the model's number, and every table and column of the layout must exist;
/// otherwise opening fails with ``StoreError/Code/modelMismatch`` listing the entities that differ.
public struct PostgreSQLDriverFactory: StoreDriverFactory {
    /// Creates the factory.
    public init() {}

    /// The oldest server the driver supports (PostgreSQL 13: `normalize`, `unnest` over arrays).
    static let minimumServerVersion = 130_000

    public func makeDriver(_ request: StoreOpenRequest) throws -> any StoreDriver {
        guard let url = request.url else {
            throw StoreError(
                .invalidRequest, "a PostgreSQL store needs a URL like postgres://user@host:5432/database?schema=name")
        }
        let location = try PostgreSQLLocation(url: url, options: request.options)
        let store = location.displayName
        let log = request.log
        let first = try connect(location, action: "opening the store", log: log)
        do {
            let pushesDownStrings = try checkServer(first, store: store)
            let layout = StoreLayout(model: request.model, schema: location.schema, entities: request.entities)
            try mapping(store, "opening the store") {
                let tables = try Self.tables(in: location.schema, on: first)
                if tables.contains("Z_PRIMARYKEY") {
                    try check(layout, tables: tables, request: request, on: first, store: store)
                } else {
                    guard !request.options.isReadOnly, request.options.createIfMissing else {
                        throw StoreError(
                            .notFound,
                            "schema '\(location.schema)' holds no store; check the URL, or allow creating it (createIfMissing)",
                            store: store)
                    }
                    try create(layout, location: location, on: first, store: store)
                }
            }
            let parameters = location.connectionParameters
            let pool = ConnectionPool(
                size: location.poolSize, waitTimeout: max(request.options.timeout, 0.001), storeName: store
            ) {
                try PGConnection(parameters: parameters, log: log)
            }
            pool.add(first)
            return PostgreSQLDriver(
                location: location, layout: layout, readOnly: request.options.isReadOnly, pool: pool,
                pushesDownStrings: pushesDownStrings)
        } catch {
            first.close()
            throw error
        }
    }

    private func mapping<T>(_ store: String, _ action: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PostgreSQLError {
            throw PostgreSQLDriver.storeError(error, action: action, store: store)
        }
    }

    private func connect(_ location: PostgreSQLLocation, action: String, log: StoreLog = .off) throws -> PGConnection {
        try mapping(location.displayName, action) {
            try PGConnection(parameters: location.connectionParameters, log: log)
        }
    }

    /// Refuses servers older than PostgreSQL 13; says whether strings may be compared in SQL (a
    /// UTF-8 database, where `normalize` works).
    private func checkServer(_ connection: PGConnection, store: String) throws -> Bool {
        let version =
            connection.parameterStatus("server_version").map { $0.split(separator: " ").first.map(String.init) ?? $0 }
            ?? "?"
        let major = Int(version.split(separator: ".").first ?? "") ?? 0
        guard major * 10_000 >= Self.minimumServerVersion else {
            throw StoreError(
                .unsupported, "the server runs PostgreSQL \(version); the driver needs PostgreSQL 13 or later",
                store: store)
        }
        return connection.parameterStatus("server_encoding")?.uppercased() == "UTF8"
    }

    /// The names of the tables in `schema` (empty when the schema does not exist).
    static func tables(in schema: String, on connection: PGConnection) throws -> Set<String> {
        var parameters = PGParameters()
        parameters.append(rawText: schema)
        let result = try connection.execute(
            """
            SELECT c.relname::text FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
            WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')
            """, parameters)
        return Set((0..<result.rowCount).map { result.rawString($0, 0) })
    }

    /// Creates the store's tables, `Z_PRIMARYKEY` rows and metadata in one transaction, unless
    /// another process created them first.
    private func create(_ layout: StoreLayout, location: PostgreSQLLocation, on connection: PGConnection, store: String)
        throws
    {
        try connection.executeScript("BEGIN")
        do {
            var lock = PGParameters()
            lock.append(rawText: "strata-create:" + location.schema)
            try connection.execute("SELECT pg_advisory_xact_lock(hashtext($1))", lock)
            let tables = try Self.tables(in: location.schema, on: connection)
            if tables.contains("Z_PRIMARYKEY") {
                // Another process created it while this one waited for the lock.
                try connection.executeScript("COMMIT")
                return
            }
            guard tables.isEmpty else {
                throw StoreError(
                    .invalidRequest,
                    "schema '\(location.schema)' holds other tables (\(tables.sorted().prefix(5).joined(separator: ", "))) but no store; name a new or empty schema with ?schema=NAME",
                    store: store)
            }
            try connection.executeScript("CREATE SCHEMA IF NOT EXISTS \(location.schema.sqlName)")
            for statement in layout.creationStatements() { try connection.executeScript(statement) }
            for entity in layout.model.entities {
                let parent = entity.superentityName.flatMap { layout.model.entity(named: $0)?.entityNumber } ?? 0
                var parameters = PGParameters()
                parameters.append(int32: entity.entityNumber)
                parameters.append(rawText: entity.name)
                parameters.append(int32: parent)
                try connection.execute(
                    "INSERT INTO \(layout.primaryKeyTable) (\("Z_ENT".sqlName), \("Z_NAME".sqlName), \("Z_SUPER".sqlName), \("Z_MAX".sqlName)) VALUES ($1, $2, $3, 0)",
                    parameters)
            }
            try MetadataCoding.write(
                StoreMetadata(
                    storeType: StoreType.postgreSQLName, values: MetadataCoding.initialValues(for: layout.model)),
                to: connection, table: layout.metadataTable, store: store)
            try connection.executeScript("COMMIT")
        } catch {
            // The error being thrown is the one that counts; a failed rollback leaves a connection
            // that is closed by the caller.
            if !connection.isBroken { try? connection.executeScript("ROLLBACK") }
            throw error
        }
    }

    /// Checks an existing store against the layout of the request's model.
    private func check(
        _ layout: StoreLayout, tables: Set<String>, request: StoreOpenRequest, on connection: PGConnection,
        store: String
    ) throws {
        let result = try connection.execute(
            "SELECT \("Z_ENT".sqlName)::bigint, \("Z_NAME".sqlName) FROM \(layout.primaryKeyTable)")
        var numbers: [String: Int64] = [:]
        for row in 0..<result.rowCount where !result.isNull(row, 1) {
            numbers[result.rawString(row, 1)] = result.int64(row, 0)
        }
        var parameters = PGParameters()
        parameters.append(rawText: layout.schema)
        let columnRows = try connection.execute(
            """
            SELECT c.relname::text, a.attname::text FROM pg_catalog.pg_attribute a \
            JOIN pg_catalog.pg_class c ON c.oid = a.attrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
            WHERE n.nspname = $1 AND a.attnum > 0 AND NOT a.attisdropped
            """, parameters)
        var columns: [String: Set<String>] = [:]
        for row in 0..<columnRows.rowCount {
            columns[columnRows.rawString(row, 0), default: []].insert(columnRows.rawString(row, 1))
        }
        var differing: Set<String> = []
        for entity in request.entities {
            guard numbers[entity.name] == Int64(entity.entityNumber),
                let entityLayout = layout.entity(entity.entityNumber),
                let table = layout.tables[entity.rootEntityName], let present = columns[table.name]
            else {
                differing.insert(entity.name)
                continue
            }
            let needed = Set(["Z_PK", "Z_ENT", "Z_OPT"] + table.columns.map(\.name))
            if !needed.isSubset(of: present) { differing.insert(entity.name) }
            for case .toManyJoin(let join) in entityLayout.slots where !tables.contains(join.table) {
                differing.insert(entity.name)
            }
        }
        if !differing.isEmpty {
            throw StoreError(
                .modelMismatch,
                "the store was written with a different model; entities that differ: \(differing.sorted().joined(separator: ", ")). Open it with the model that wrote it",
                store: store)
        }
    }

    public func metadata(at url: URL, options: StoreOptions) throws -> StoreMetadata? {
        let location = try PostgreSQLLocation(url: url, options: options)
        let connection = try connect(
            location, action: "reading metadata", log: options.log ?? .environment(store: location.displayName))
        defer { connection.close() }
        return try mapping(location.displayName, "reading metadata") {
            guard try Self.tables(in: location.schema, on: connection).contains("Z_METADATA") else { return nil }
            let table = "\(location.schema.sqlName).\("Z_METADATA".sqlName)"
            return try MetadataCoding.read(from: connection, table: table, store: location.displayName)
        }
    }
}

extension StoreType {
    /// The name PostgreSQL stores record as their type.
    public static let postgreSQLName = "PostgreSQL"

    /// The PostgreSQL store type: Core Data's layout on a PostgreSQL server, shared by many
    /// processes (`postgres://user@host:5432/database?schema=name`).
    public static var postgreSQL: StoreType {
        let type = StoreType(name: postgreSQLName, factory: PostgreSQLDriverFactory())
        register(type)
        return type
    }
}
