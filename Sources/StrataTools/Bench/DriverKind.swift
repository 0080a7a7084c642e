import Foundation
import Strata
import StrataInMemory
import StrataLMDB
import StrataPostgreSQL
import StrataSQLite
import StrataXML

/// The Strata drivers the benchmarks know, by the name `strata bench --drivers` takes.
///
/// A driver is used when its store type is registered (``StoreType/named(_:)``); drivers not
/// linked into this build are skipped and reported as such. Adding a driver to the benchmarks:
/// link its product into `StrataTools` (Package.swift) and add one line to ``registerLinkedDrivers()``.
public enum DriverKind: String, CaseIterable, Sendable, Codable {
    /// The in-memory reference driver (`StoreType.inMemory`).
    case memory
    /// The SQLite driver (`StoreType.sqlite`, product StrataSQLite).
    case sqlite
    /// The XML driver (`StoreType.xml`, product StrataXML).
    case xml
    /// The LMDB driver (`StoreType.lmdb`, product StrataLMDB).
    case lmdb
    /// The PostgreSQL driver (`StoreType.postgreSQL`, product StrataPostgreSQL), on the server
    /// named by the environment variable `STRATA_BENCH_POSTGRES` (``postgresServerVariable``).
    case postgres

    /// The name the driver registers its store type under.
    public var storeTypeName: String {
        switch self {
        case .memory: "InMemory"
        case .sqlite: "SQLite"
        case .xml: "XML"
        case .lmdb: "LMDB"
        case .postgres: "PostgreSQL"
        }
    }

    /// The file the store is created as inside a round's directory (`nil`: no file).
    public var fileName: String? {
        switch self {
        case .memory, .postgres: nil
        case .sqlite: "bench.sqlite"
        case .xml: "bench.xml"
        case .lmdb: "bench.lmdb"
        }
    }

    /// The environment variable naming the PostgreSQL server the benchmarks use: a store URL
    /// without a schema (`postgres://user@127.0.0.1:5432/postgres`). `scripts/bench.sh` starts a
    /// throwaway server and sets it; each round uses a schema of its own, dropped when it closes.
    public static let postgresServerVariable = "STRATA_BENCH_POSTGRES"

    private static let postgresServerOverride = Locked<URL?>(nil)

    /// Names the PostgreSQL server for this process (instead of ``postgresServerVariable``), or
    /// `nil` to go back to the environment.
    public static func usePostgresServer(_ url: URL?) { postgresServerOverride.withLock { $0 = url } }

    /// The PostgreSQL server the benchmarks use, if any.
    public static var postgresServer: URL? {
        postgresServerOverride.withLock { $0 }
            ?? ProcessInfo.processInfo.environment[postgresServerVariable].flatMap { URL(string: $0) }
    }

    /// The store's location for a round whose directory is `directory`: the file inside it, a
    /// schema named after it on the benchmark server, or `nil` (in memory).
    public func location(in directory: URL) -> URL? {
        if self == .postgres {
            guard let base = Self.postgresServer,
                var components = URLComponents(url: base, resolvingAgainstBaseURL: false)
            else {
                return nil
            }
            // The same directory gives the same schema (a reopen finds its store); another
            // directory another one, through a hash of the whole path.
            var digest = SHA256Digest()
            digest.update(Array(directory.standardizedFileURL.path.utf8))
            let hash = digest.finalize().prefix(8).map { String(format: "%02x", $0) }.joined()
            let name = directory.lastPathComponent.lowercased().map {
                $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_"
            }
            components.queryItems =
                (components.queryItems ?? []).filter { $0.name != "schema" }
                + [URLQueryItem(name: "schema", value: "bench_\(hash)_" + String(name.suffix(24)))]
            return components.url
        }
        return fileName.map { directory.appendingPathComponent($0) }
    }

    /// Removes what a round left on a server (the round's schema); files go with their directory.
    public func removeStore(at url: URL?) throws {
        guard self == .postgres, let url else { return }
        try PostgreSQLDriverFactory.removeStore(at: url)
    }

    /// Why this driver cannot be benchmarked now, or `nil`: not linked into this build, or (for
    /// PostgreSQL) no server named.
    public var unavailableReason: String? {
        Self.registerLinkedDrivers()
        if StoreType.named(storeTypeName) == nil {
            return
                "the \(storeTypeName) driver is not linked into this build (store type '\(storeTypeName)' is not registered)"
        }
        if self == .postgres, Self.postgresServer == nil {
            return
                "no PostgreSQL server: set \(Self.postgresServerVariable) to a server's URL (scripts/bench.sh starts one)"
        }
        return nil
    }

    /// The engine family whose raw C baseline Strata on this driver is compared with.
    public var engine: String { rawValue }

    /// The store options the benchmarks open this driver with: the durability settings
    /// docs/benchmarks.md states, named explicitly where the driver has options for them (they
    /// are the drivers' defaults today, and stay what ``settings`` says if a default changes).
    /// SQLite: WAL with `synchronous=NORMAL`; LMDB: sync on commit; XML: temporary file, fsync,
    /// rename (no options).
    public var storeOptions: StoreOptions {
        switch self {
        case .sqlite: StoreOptions(values: ["journal_mode": "WAL", "synchronous": "NORMAL"])
        case .lmdb: StoreOptions(values: ["sync": "full"])
        case .memory, .xml, .postgres: StoreOptions()
        }
    }

    /// The durability settings in words, for reports.
    public var settings: String {
        switch self {
        case .memory: "in memory: nothing is written"
        case .sqlite: "journal_mode=WAL, synchronous=NORMAL (WAL synced at checkpoints, not at each commit)"
        case .xml: "whole file written to a temporary file, fsync, rename (the driver's only mode)"
        case .lmdb: "sync=full (LMDB's default: data and meta page synced at every commit)"
        case .postgres:
            "PostgreSQL on loopback: fsync=on, synchronous_commit=on (the run's server also has autovacuum off); array statements, one transaction per save"
        }
    }

    /// The registered store type, or `nil` when the driver is not linked into this build.
    public var storeType: StoreType? {
        Self.registerLinkedDrivers()
        return StoreType.named(storeTypeName)
    }

    /// Registers the store types of the drivers linked into StrataTools. Store types register
    /// themselves when their constant is first used; one line per linked driver.
    public static func registerLinkedDrivers() {
        _ = StoreType.inMemory
        _ = StoreType.sqlite
        _ = StoreType.xml
        _ = StoreType.lmdb
        _ = StoreType.postgreSQL
    }

    /// The drivers that can be benchmarked now (``unavailableReason`` is `nil`).
    public static var available: [DriverKind] { allCases.filter { $0.unavailableReason == nil } }

    /// Parses a comma-separated list (`sqlite,lmdb`); `nil` for an unknown name, with the name.
    public static func parseList(_ text: String) -> Result<[DriverKind], BenchError> {
        var kinds: [DriverKind] = []
        for part in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) {
            let name = part == "inmemory" || part == "in-memory" ? "memory" : part
            guard let kind = DriverKind(rawValue: name) else {
                return .failure(
                    BenchError(
                        "unknown driver '\(part)'; known drivers: \(allCases.map(\.rawValue).joined(separator: ", "))"))
            }
            if !kinds.contains(kind) { kinds.append(kind) }
        }
        return .success(kinds)
    }
}
