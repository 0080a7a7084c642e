import CLMDB
import Foundation
import Strata

/// The LMDB driver's store options, read from ``StoreOptions/values``:
///
/// | key          | meaning                                                        | default  |
/// |--------------|----------------------------------------------------------------|----------|
/// | `mapSize`    | initial map size in bytes (suffixes K, M, G, T allowed)        | `64M`    |
/// | `maxMapSize` | the largest the map may grow to before saves fail with `.full` | `1T`     |
/// | `sync`       | `full` (sync every commit), `meta` (no meta-page sync), `none` | `full`   |
/// | `maxReaders` | reader slots (concurrent read transactions of all processes)   | `126`    |
/// | `residentMapLimit` | the most of the map kept resident after reads; `0`: no limit | `32M` |
public struct LMDBOptions: Sendable, Hashable {
    /// Initial map size in bytes.
    public var mapSize: Int = 64 << 20
    /// The largest map size in bytes.
    public var maximumMapSize: Int = 1 << 40
    /// Durability of commits.
    public var sync: Sync = .full
    /// Reader slots.
    public var maximumReaders: Int = 126
    /// The most of the memory map, in bytes, that reads leave in this process's resident set:
    /// past it, the pages read since the last drop are given back to the kernel (they stay in its
    /// page cache; the next read of them faults them back in). `0`: no limit, every page read stays
    /// resident until the store closes. A store smaller than the limit is never affected.
    public var residentMapLimit: Int = 32 << 20
    /// Named databases the environment allows.
    var maximumDatabases: Int = 64

    /// Commit durability.
    public enum Sync: String, Sendable, Hashable {
        /// Every commit is synced to disk (LMDB's default).
        case full
        /// Data pages are synced, the meta page not (`MDB_NOMETASYNC`): the last commit may be lost
        /// on a system crash, never the consistency of the store.
        case meta
        /// Nothing is synced (`MDB_NOSYNC`): commits survive a process crash, not a system crash.
        case none
    }

    /// Default options.
    public init() {}

    /// Reads the options from a store's option values.
    ///
    /// - Throws: ``StoreError/Code/invalidRequest`` naming the option and the values it accepts.
    public init(_ options: StoreOptions, store: String) throws {
        let values = options.values
        if let text = values["mapSize"] { mapSize = try Self.bytes(text, "mapSize", store: store) }
        if let text = values["maxMapSize"] { maximumMapSize = try Self.bytes(text, "maxMapSize", store: store) }
        if let text = values["sync"] {
            guard let sync = Sync(rawValue: text.lowercased()) else {
                throw StoreError(
                    .invalidRequest, "store option sync is '\(text)'; use full, meta or none", store: store)
            }
            self.sync = sync
        }
        if let text = values["maxReaders"] {
            guard let count = Int(text), count > 0 else {
                throw StoreError(
                    .invalidRequest, "store option maxReaders is '\(text)'; use a positive integer", store: store)
            }
            maximumReaders = count
        }
        if let text = values["residentMapLimit"] {
            if text.trimmingCharacters(in: .whitespaces) == "0" {
                residentMapLimit = 0
            } else {
                residentMapLimit = try Self.bytes(text, "residentMapLimit", store: store, zero: true)
            }
        }
        mapSize = min(mapSize, maximumMapSize)
    }

    var syncFlags: UInt32 {
        switch sync {
        case .full: 0
        case .meta: UInt32(MDB_NOMETASYNC)
        case .none: UInt32(MDB_NOSYNC)
        }
    }

    static func bytes(_ text: String, _ name: String, store: String, zero: Bool = false) throws -> Int {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        var digits = text.trimmingCharacters(in: .whitespaces).uppercased()
        if digits.hasSuffix("B") { digits.removeLast() }
        var factor = 1
        if let last = digits.last, let unit = units[last] {
            factor = unit
            digits.removeLast()
        }
        guard let number = Int(digits), number > 0, number <= Int.max / factor else {
            throw StoreError(
                .invalidRequest,
                "store option \(name) is '\(text)'; use a byte count such as 1048576 or 64M\(zero ? ", or 0 for no limit" : "")",
                store: store)
        }
        return number * factor
    }
}
