import Foundation
import Strata
import StrataInMemory
import StrataLMDB
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

    /// The name the driver registers its store type under.
    public var storeTypeName: String {
        switch self {
        case .memory: "InMemory"
        case .sqlite: "SQLite"
        case .xml: "XML"
        case .lmdb: "LMDB"
        }
    }

    /// The file the store is created as inside a round's directory (`nil`: no file).
    public var fileName: String? {
        switch self {
        case .memory: nil
        case .sqlite: "bench.sqlite"
        case .xml: "bench.xml"
        case .lmdb: "bench.lmdb"
        }
    }

    /// The engine family whose raw C baseline Strata on this driver is compared with.
    public var engine: String { rawValue }

    /// The store options the benchmarks open this driver with. Empty means the driver's
    /// defaults, which are the durability settings docs/benchmarks.md states (SQLite: WAL with
    /// `synchronous=NORMAL`; LMDB: sync on commit; XML: temporary file, fsync, rename).
    public var storeOptions: StoreOptions { StoreOptions() }

    /// The durability settings in words, for reports.
    public var settings: String {
        switch self {
        case .memory: "in memory: nothing is written"
        case .sqlite: "driver defaults: WAL journal, synchronous=NORMAL"
        case .xml: "driver defaults: whole file written to a temporary file, fsync, rename"
        case .lmdb: "driver defaults: LMDB sync on commit"
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
    }

    /// The drivers whose store types are registered now.
    public static var available: [DriverKind] { allCases.filter { $0.storeType != nil } }

    /// Parses a comma-separated list (`sqlite,lmdb`); `nil` for an unknown name, with the name.
    public static func parseList(_ text: String) -> Result<[DriverKind], BenchError> {
        var kinds: [DriverKind] = []
        for part in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) {
            let name = part == "inmemory" || part == "in-memory" ? "memory" : part
            guard let kind = DriverKind(rawValue: name) else {
                return .failure(BenchError("unknown driver '\(part)'; known drivers: \(allCases.map(\.rawValue).joined(separator: ", "))"))
            }
            if !kinds.contains(kind) { kinds.append(kind) }
        }
        return .success(kinds)
    }
}
