import Foundation
import Strata
import StrataInMemory
import StrataLMDB
import StrataPostgreSQL
import StrataSQLite
import StrataXML

/// The drivers this build of `strata` knows, registered by name with ``StoreType/register(_:)``.
///
/// This is the one place a driver is added to the tool: import its module above and add one line
/// below (and add the product to `StrataTools`' dependencies in Package.swift). Store locations
/// (`sqlite:`, `xml:`, `lmdb:`, `memory:`, `postgres://`) find drivers by name through ``StoreType/named(_:)``,
/// so a driver missing here is reported as "not available in this build", never a crash.
public enum KnownDrivers {
    /// Every known store type.
    public static var all: [StoreType] {
        [
            .inMemory,
            .sqlite,
            .xml,
            .lmdb,
            .postgreSQL,
        ]
    }

    /// Registers every known driver by name; idempotent.
    public static func registerAll() {
        for type in all { StoreType.register(type) }
    }

    /// The known drivers whose stores live in files (every one but the in-memory driver and the
    /// server's), by location scheme: what cross-process round trips on files can use.
    public static var fileBacked: [StoreLocation.Scheme] {
        registerAll()
        return StoreLocation.Scheme.allCases.filter {
            $0 != .memory && $0 != .postgres && StoreType.named($0.driverName) != nil
        }
    }
}
