import Foundation
import Strata

/// What the benchmarks need of each known driver: where a round's store goes, whether the
/// driver can run now, and the options it runs with. The drivers themselves, and the names
/// `strata bench --drivers` takes, are the table ``KnownDriver/allCases``.
extension KnownDriver {
    /// The file the store is created as inside a round's directory (`bench.` and the driver's
    /// first extension), `nil` for drivers whose stores are not files.
    public var fileName: String? { fileExtensions.first.map { "bench." + $0 } }

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
        if isOnServer {
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
        guard isOnServer, let url else { return }
        try type.factory.destroyStore(at: url, options: storeOptions)
    }

    /// Why this driver cannot be benchmarked now, or `nil`: not linked into this build, or (for
    /// PostgreSQL) no server named.
    public var unavailableReason: String? {
        Self.registerAll()
        if StoreType.named(driverName) == nil {
            return
                "the \(driverName) driver is not linked into this build (store type '\(driverName)' is not registered)"
        }
        if isOnServer, Self.postgresServer == nil {
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
        default: StoreOptions()  // no durability options: the driver's only mode (settings says which)
        }
    }

    /// The registered store type, or `nil` when the driver is not linked into this build.
    public var storeType: StoreType? {
        Self.registerAll()
        return StoreType.named(driverName)
    }

    /// The drivers that can be benchmarked now (``unavailableReason`` is `nil`).
    public static var available: [KnownDriver] { allCases.filter { $0.unavailableReason == nil } }

    /// Parses a comma-separated list (`sqlite,lmdb`); `nil` for an unknown name, with the name.
    /// Drivers may be named by their store type's name or title too (`InMemory`, `in-memory`).
    public static func parseList(_ text: String) -> Result<[KnownDriver], BenchError> {
        var kinds: [KnownDriver] = []
        for part in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            guard let kind = KnownDriver(anyName: part) else {
                return .failure(
                    BenchError(
                        "unknown driver '\(part)'; known drivers: \(allCases.map(\.rawValue).joined(separator: ", "))"))
            }
            if !kinds.contains(kind) { kinds.append(kind) }
        }
        return .success(kinds)
    }
}
