import Foundation
import Strata

/// Where a PostgreSQL store lives and how to connect, read from a store URL:
///
/// `postgres://user[:password]@host[:port]/database?schema=name&pool_size=4&sslmode=require`
/// (`postgresql://` too).
///
/// - `schema` (default `public`) is the PostgreSQL schema holding the store's tables; one store
///   per schema.
/// - Driver options: `pool_size` (connections, default 4), `statement_timeout` and
///   `lock_timeout` (seconds; the lock timeout defaults to ``StoreOptions/timeout``),
///   `connect_timeout` (seconds, default 10).
/// - libpq's own: `sslmode`, `sslrootcert`, `sslcert`, `sslkey`, `sslcrl`, `host` (a socket
///   directory), `hostaddr`, `passfile`, `application_name`, `target_session_attrs`,
///   `channel_binding`, `gssencmode`, `options`.
///
/// The same keys may be given in ``StoreOptions/values``; those win over the URL. Without a
/// password in the URL, libpq takes it from `PGPASSWORD` or the password file (`~/.pgpass`,
/// `PGPASSFILE`), and user, host, port and database default to libpq's environment (`PGUSER`,
/// `PGHOST`, …). The password is never part of ``displayName`` or of any message.
///
/// Thread safety: a value, `Sendable`.
public struct PostgreSQLLocation: Sendable, Hashable, CustomStringConvertible {
    /// The user name, if the URL gives one.
    public var user: String?
    /// The host, if given (a name, an address, or, through `?host=`, a socket directory).
    public var host: String?
    /// The port, if given.
    public var port: Int?
    /// The database, if given.
    public var database: String?
    /// The schema holding the store's tables.
    public var schema: String
    /// libpq connection keywords besides user, password, host, port and database.
    public var connectionOptions: [String: String]
    /// Connections in the pool.
    public var poolSize: Int
    /// Statement timeout in seconds (`nil`: the server's).
    public var statementTimeout: Double?
    /// Lock timeout in seconds.
    public var lockTimeout: Double
    /// Connection timeout in seconds.
    public var connectTimeout: Double
    /// Whether connections refuse writes (`default_transaction_read_only`).
    public var isReadOnly: Bool
    private var password: String?

    /// URL schemes this driver opens.
    public static let schemes: Set<String> = ["postgres", "postgresql"]

    static let libpqKeys: Set<String> = [
        "sslmode", "sslrootcert", "sslcert", "sslkey", "sslcrl", "host", "hostaddr", "passfile", "application_name",
        "target_session_attrs", "channel_binding", "gssencmode", "options", "sslpassword", "requiressl",
    ]
    static let driverKeys: Set<String> = [
        "schema", "pool_size", "statement_timeout", "lock_timeout", "connect_timeout",
    ]
    /// The longest identifier PostgreSQL keeps (NAMEDATALEN - 1 bytes).
    static let maximumIdentifierBytes = 63

    /// Reads a store URL and the store's options.
    ///
    /// - Throws: ``StoreError`` `.invalidRequest` naming the part of the URL or option that is wrong.
    public init(url: URL, options: StoreOptions = StoreOptions()) throws {
        let shown = Self.redacted(url)
        guard let scheme = url.scheme?.lowercased(), Self.schemes.contains(scheme),
            let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else {
            throw StoreError(
                .invalidRequest, "a PostgreSQL store needs a URL like postgres://user@host:5432/database?schema=name",
                store: shown)
        }
        user = components.user.flatMap { $0.removingPercentEncoding ?? $0 }.flatMap { $0.isEmpty ? nil : $0 }
        password = components.password.flatMap { $0.removingPercentEncoding ?? $0 }
        var hostName = components.host.flatMap { $0.removingPercentEncoding ?? $0 }
        if let name = hostName, name.hasPrefix("["), name.hasSuffix("]") {
            hostName = String(name.dropFirst().dropLast())
        }
        host = hostName.flatMap { $0.isEmpty ? nil : $0 }
        port = components.port
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = path.isEmpty ? nil : path
        var values: [String: String] = [:]
        for item in components.queryItems ?? [] {
            let key = item.name.lowercased()
            guard Self.libpqKeys.contains(key) || Self.driverKeys.contains(key) else {
                throw StoreError(
                    .invalidRequest,
                    "unknown option '\(item.name)' in the store URL; known: \((Self.driverKeys.union(Self.libpqKeys)).sorted().joined(separator: ", "))",
                    store: shown)
            }
            values[key] = item.value ?? ""
        }
        for (key, value) in options.values {
            let key = key.lowercased()
            guard Self.libpqKeys.contains(key) || Self.driverKeys.contains(key) else {
                throw StoreError(.invalidRequest, "unknown store option '\(key)' for a PostgreSQL store", store: shown)
            }
            values[key] = value
        }
        schema = values.removeValue(forKey: "schema") ?? "public"
        guard !schema.isEmpty, schema.utf8.count <= Self.maximumIdentifierBytes,
            !schema.unicodeScalars.contains("\u{0}")
        else {
            throw StoreError(
                .invalidRequest,
                "the schema name '\(schema)' must have 1 to \(Self.maximumIdentifierBytes) bytes and no NUL character",
                store: shown)
        }
        func number(_ key: String, default fallback: Double?, minimum: Double) throws -> Double? {
            guard let text = values.removeValue(forKey: key) else { return fallback }
            guard let value = Double(text), value.isFinite, value >= minimum else {
                throw StoreError(
                    .invalidRequest, "option '\(key)' must be a number of at least \(minimum), not '\(text)'",
                    store: shown)
            }
            return value
        }
        let pool = try number("pool_size", default: 4, minimum: 1) ?? 4
        guard pool <= 1000, pool == pool.rounded() else {
            throw StoreError(.invalidRequest, "option 'pool_size' must be a whole number from 1 to 1000", store: shown)
        }
        poolSize = Int(pool)  // a whole number from 1 to 1000: the conversion cannot trap
        statementTimeout = try number("statement_timeout", default: nil, minimum: 0)
        lockTimeout = try number("lock_timeout", default: max(options.timeout, 0), minimum: 0) ?? 5
        connectTimeout = try number("connect_timeout", default: 10, minimum: 1) ?? 10
        connectionOptions = values
        isReadOnly = options.isReadOnly
    }

    /// The URL without its password, for messages and store names.
    public var displayName: String {
        var text = "postgres://"
        if let user { text += (user.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed) ?? user) + "@" }
        if let host { text += host.contains(":") ? "[\(host)]" : host }
        if let port { text += ":\(port)" }
        text += "/" + (database ?? "")
        text += "?schema=" + (schema.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? schema)
        return text
    }

    public var description: String { displayName }

    /// `url` with any password replaced by `***`, for messages about URLs that did not parse.
    public static func redacted(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false), components.password != nil
        else {
            return url.absoluteString
        }
        components.password = "***"
        return components.string ?? "postgres://…"
    }

    /// libpq keyword/value pairs for a connection.
    var connectionParameters: [(String, String)] {
        var parameters: [(String, String)] = []
        if let host { parameters.append(("host", host)) }
        if let port { parameters.append(("port", String(port))) }
        if let database { parameters.append(("dbname", database)) }
        if let user { parameters.append(("user", user)) }
        if let password { parameters.append(("password", password)) }
        var serverOptions: [String] = []
        if let statementTimeout { serverOptions.append("-c statement_timeout=\(Self.milliseconds(statementTimeout))") }
        serverOptions.append("-c lock_timeout=\(Self.milliseconds(lockTimeout))")
        if isReadOnly { serverOptions.append("-c default_transaction_read_only=on") }
        for (key, value) in connectionOptions.sorted(by: { $0.key < $1.key }) {
            if key == "options" { serverOptions.insert(value, at: 0) } else { parameters.append((key, value)) }
        }
        if connectionOptions["application_name"] == nil { parameters.append(("application_name", "strata")) }
        parameters.append(("client_encoding", "UTF8"))
        parameters.append(("connect_timeout", String(max(Int(connectTimeout.rounded(.up)), 1))))
        parameters.append(("options", serverOptions.joined(separator: " ")))
        return parameters
    }

    static func milliseconds(_ seconds: Double) -> Int64 {
        let value = (seconds * 1000).rounded()
        return value >= Double(Int32.max) ? Int64(Int32.max) : Int64(value)
    }

    /// The `LISTEN` channel of the store: `strata:<schema>`, or a hash of the schema name when
    /// that would pass PostgreSQL's 63-byte limit. Notifications are per database, so the schema
    /// names the store.
    var channel: String {
        let plain = "strata:" + schema
        if plain.utf8.count <= Self.maximumIdentifierBytes { return plain }
        var digest = SHA256Digest()
        digest.update(Array(schema.utf8))
        return "strata:" + digest.finalize().prefix(16).map { String(format: "%02x", $0) }.joined()
    }
}
