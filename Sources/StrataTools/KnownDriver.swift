import Foundation
import Strata
import StrataInMemory
import StrataLMDB
import StrataPostgreSQL
import StrataSQLite
import StrataXML

/// A driver this build of `strata` knows: its name on the command line, its store type, where its
/// stores live and how a path is recognised as one of its stores.
///
/// ``allCases`` is the one table of drivers. Store locations (`sqlite:PATH`, a bare `.xml` path,
/// `postgres://…`), `strata bench --drivers`, the benchmarks' contenders and the `strata demo` tour
/// all read it, so adding a driver is one entry there, its module's import above, and its product
/// among `StrataTools`' dependencies in Package.swift. A driver whose store type is not registered
/// is reported as "not available in this build", never a crash.
public struct KnownDriver: Sendable, Hashable, CaseIterable, RawRepresentable, Codable, CustomStringConvertible {
    /// Where a driver's stores live.
    public enum Storage: Sendable, Hashable {
        /// In this process's memory: `memory:` or `memory:NAME`.
        case memory
        /// In a file written `NAME:PATH`, or as a bare path with one of `extensions` (the first is
        /// the one new stores get); `directories`: an existing directory is one of its stores.
        case file(extensions: [String], directories: Bool)
        /// On a database server, at a URL with one of `urlSchemes` (`example` shows one).
        case server(urlSchemes: [String], example: String)
    }

    /// The name the command line and benchmarks use (`sqlite`): the location scheme of
    /// `sqlite:PATH` and the name `strata bench --drivers` takes.
    public let rawValue: String
    /// The driver's store type.
    public let type: StoreType
    /// The name people read (`SQLite`, `in-memory`).
    public let title: String
    /// Where its stores live.
    public let storage: Storage
    /// The first bytes of its store files that identify them (after `skipping` bytes such as
    /// whitespace), or `nil` when its files have no signature checked here.
    let signature: (prefix: [UInt8], skipping: Set<UInt8>)?
    /// The durability settings the driver's defaults give, in words, for benchmark reports.
    public let settings: String

    init(
        _ name: String, _ type: StoreType, title: String, storage: Storage,
        signature: (prefix: String, skipping: Set<UInt8>)? = nil, settings: String
    ) {
        self.rawValue = name
        self.type = type
        self.title = title
        self.storage = storage
        self.signature = signature.map { (Array($0.prefix.utf8), $0.skipping) }
        self.settings = settings
    }

    /// Every known driver, in the order tools list them. This is the table.
    public static let allCases: [KnownDriver] = [
        KnownDriver(
            "memory", .inMemory, title: "in-memory", storage: .memory, settings: "in memory: nothing is written"),
        KnownDriver(
            "sqlite", .sqlite, title: "SQLite",
            storage: .file(extensions: ["sqlite", "sqlite3", "db", "storedata"], directories: false),
            signature: ("SQLite format 3", []),
            settings: "journal_mode=WAL, synchronous=NORMAL (WAL synced at checkpoints, not at each commit)"),
        KnownDriver(
            "xml", .xml, title: "XML", storage: .file(extensions: ["xml"], directories: false),
            signature: ("<", [0x20, 0x0A, 0x0D, 0x09, 0xEF, 0xBB, 0xBF]),
            settings: "whole file written to a temporary file, fsync, rename (the driver's only mode)"),
        KnownDriver(
            "lmdb", .lmdb, title: "LMDB", storage: .file(extensions: ["lmdb"], directories: true),
            settings: "sync=full (LMDB's default: data and meta page synced at every commit)"),
        KnownDriver(
            "postgres", .postgreSQL, title: "PostgreSQL",
            storage: .server(
                urlSchemes: ["postgres", "postgresql"], example: "postgres://user@host:5432/database?schema=NAME"),
            settings:
                "PostgreSQL on loopback: fsync=on, synchronous_commit=on (the run's server also has autovacuum off); array statements, one transaction per save"
        ),
    ]

    /// The known driver named `name` (its ``rawValue``, case-insensitive), or `nil`.
    public init?(rawValue name: String) {
        guard let match = Self.allCases.first(where: { $0.rawValue == name.lowercased() }) else { return nil }
        self = match
    }

    /// The known driver whose store type is named `name` (case-insensitive), or `nil`.
    public init?(driverName name: String) {
        guard let match = Self.allCases.first(where: { $0.driverName.lowercased() == name.lowercased() }) else {
            return nil
        }
        self = match
    }

    /// The known driver called `name` by its ``rawValue``, its store type's name or its title
    /// (`memory`, `InMemory`, `in-memory`; case-insensitive), or `nil`.
    public init?(anyName name: String) {
        let lowered = name.lowercased()
        guard
            let match = Self.allCases.first(where: {
                $0.rawValue == lowered || $0.driverName.lowercased() == lowered || $0.title.lowercased() == lowered
            })
        else { return nil }
        self = match
    }

    /// The name of the driver's ``StoreType`` (`SQLite`), as stores record it.
    public var driverName: String { type.name }

    /// Whether the driver's stores live in files or directories.
    public var isFileBacked: Bool {
        if case .file = storage { return true }
        return false
    }

    /// Whether the driver's stores live on a database server.
    public var isOnServer: Bool {
        if case .server = storage { return true }
        return false
    }

    /// The extensions a bare path of one of its stores may have; the first one is given to new
    /// stores. Empty for drivers whose stores are not files.
    public var fileExtensions: [String] {
        if case .file(let extensions, _) = storage { return extensions }
        return []
    }

    /// How a location of this driver is written, for messages: `sqlite:PATH`, `memory:`,
    /// `postgres://user@host:5432/database?schema=NAME`.
    public var locationExample: String {
        switch storage {
        case .memory: "\(rawValue):"
        case .file: "\(rawValue):PATH"
        case .server(_, let example): example
        }
    }

    /// Whether `head`, the first bytes of a file, carries this driver's signature.
    func recognizes(_ head: [UInt8]) -> Bool {
        guard let signature else { return false }
        return head.drop(while: { signature.skipping.contains($0) }).starts(with: signature.prefix)
    }

    public var description: String { rawValue }

    public static func == (lhs: KnownDriver, rhs: KnownDriver) -> Bool { lhs.rawValue == rhs.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    public init(from decoder: any Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        guard let driver = KnownDriver(rawValue: name) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath,
                    debugDescription:
                        "unknown driver '\(name)'; known drivers: \(Self.allCases.map(\.rawValue).joined(separator: ", "))"
                ))
        }
        self = driver
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// Registers every known driver's store type by name (``StoreType/named(_:)``); idempotent.
    public static func registerAll() {
        for driver in allCases { StoreType.register(driver.type) }
    }

    /// The known drivers whose stores live in files: what cross-process round trips on files use.
    public static var fileBacked: [KnownDriver] { allCases.filter(\.isFileBacked) }

    /// The known driver named `name`, for the built-in drivers named below; a missing entry is a
    /// programming error in this file, caught by its tests.
    private static func builtIn(_ name: String) -> KnownDriver {
        guard let driver = KnownDriver(rawValue: name) else {
            // Safe: only the names of entries of `allCases` above are passed here, and
            // KnownDriverTests looks each of them up.
            preconditionFailure("the driver table has no entry '\(name)'")
        }
        return driver
    }

    // Names for code that means one built-in driver in particular (tests, the demo's conversion,
    // benchmark sections); a new driver needs none of these.

    /// The in-memory reference driver.
    public static var memory: KnownDriver { builtIn("memory") }
    /// The SQLite driver.
    public static var sqlite: KnownDriver { builtIn("sqlite") }
    /// The XML driver.
    public static var xml: KnownDriver { builtIn("xml") }
    /// The LMDB driver.
    public static var lmdb: KnownDriver { builtIn("lmdb") }
    /// The PostgreSQL driver.
    public static var postgres: KnownDriver { builtIn("postgres") }
}
