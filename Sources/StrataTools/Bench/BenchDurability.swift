import Foundation
import Strata

/// Store options that change one benchmark contender's durability from its driver's benchmark
/// settings (``KnownDriver/storeOptions``), so engines can be compared at matched durability
/// (docs/benchmarks.md, "Durability settings").
///
/// A contender made with one (``StrataBenchContender/init(kind:durability:)``,
/// ``DriverBenchContender/init(kind:durability:)``) is named `strata-<driver>-<name>` or
/// `driver-<driver>-<name>` and reports ``settings`` instead of the driver kind's.
public struct BenchDurability: Sendable, Hashable, Codable {
    /// The suffix of the contender's identifier (`syncfull` in `strata-sqlite-syncfull`).
    public var name: String
    /// Driver option values (``StoreOptions/values``) set over the driver kind's.
    public var values: [String: String]
    /// The durability settings in words, for reports.
    public var settings: String

    /// Creates a durability setting.
    public init(name: String, values: [String: String], settings: String) {
        self.name = name
        self.values = values
        self.settings = settings
    }
}

extension KnownDriver {
    /// ``storeOptions`` with `durability`'s values set over them (``storeOptions`` when `nil`).
    public func storeOptions(_ durability: BenchDurability?) -> StoreOptions {
        var options = storeOptions
        for (key, value) in durability?.values ?? [:] { options.values[key] = value }
        return options
    }
}
