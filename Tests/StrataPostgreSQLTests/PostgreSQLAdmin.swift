import Foundation
import StrataTesting

@testable import StrataPostgreSQL

/// Runs SQL as the test server's superuser, for setting up what a test needs (roles, locks).
enum PostgreSQLAdmin {
    /// A superuser connection to the server's `postgres` database.
    static func connect(_ server: PostgreSQLTestServer, options: [String: String] = [:]) throws -> PGConnection {
        let location = try PostgreSQLLocation(url: server.url(schema: "public", options: options))
        return try PGConnection(parameters: location.connectionParameters)
    }

    /// Runs each statement (the test's own text) on a new connection.
    static func execute(_ statements: [String], on server: PostgreSQLTestServer) throws {
        let connection = try connect(server)
        defer { connection.close() }
        for statement in statements { try connection.executeScript(statement) }
    }

    /// The rows of a query whose columns are all `text` (cast others with `::text`); NULL as nil.
    static func rows(_ sql: String, on server: PostgreSQLTestServer) throws -> [[String?]] {
        let connection = try connect(server)
        defer { connection.close() }
        let result = try connection.execute("SELECT * FROM (\(sql)) q")
        return (0..<result.rowCount).map { row in
            (0..<result.columnCount).map { column in result.isNull(row, column) ? nil : result.rawString(row, column) }
        }
    }
}
