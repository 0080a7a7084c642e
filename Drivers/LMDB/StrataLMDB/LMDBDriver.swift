import CLMDB
import Foundation
import Strata
import Synchronization

// LMDB DRIVER INVARIANTS
// D1. Every row lives in the rows database of its inheritance root under Keys.row(id); its body
//     is RowCodec version 1 with one slot per property of its entity.
// D2. For every stored to-one value r.slot = d there is exactly one entry refs[rel, d] -> r, and
//     no other refs entries name r as source.
// D3. For every links entry links[rel, s] -> d of a relationship with a to-many inverse there is
//     the mirror links[inverse, d] -> s.
// D4. For every index covering a row's entity there is exactly one entry index[id, values] -> row.
// D5. meta["pk" root] is at least the largest primary key ever stored or handed out in that root.
// D6. All of a save happens in one write transaction (LMDBEnvironment, E4): readers see all of it
//     or none of it.
// D7. No pointer into the map outlives the transaction that produced it (E5).

/// The LMDB store: Strata's own binary layout on LMDB (docs/formats/lmdb.md).
///
/// Each save is one write transaction; fetches, fault fulfilment and relationship loads run in
/// MVCC read transactions that never wait for the writer (``DriverCapabilities/concurrentReads``).
/// Predicates, sorts and pages are applied exactly inside the driver (indexes narrow the rows,
/// the core's evaluator decides), so the coordinator has nothing left to do.
///
/// Thread safety: `Sendable`. The environment serializes writers and resizes; read transactions
/// are independent; the remaining state is immutable or atomic.
public final class LMDBDriver: StoreDriver {
    let environment: LMDBEnvironment
    let layout: DatabaseLayout
    let databases: Databases
    /// The store's path, for messages.
    public let storeName: String
    private let closed = Atomic<Bool>(false)

    /// The named databases of one store.
    struct Databases: Sendable {
        var meta: MDB_dbi
        var refs: MDB_dbi
        var links: MDB_dbi
        var orders: MDB_dbi
        var index: MDB_dbi
        var rows: [Int32: MDB_dbi]
    }

    /// Which entities each relationship may name (checked on every ID read from the file).
    let targets: ReferenceTargets

    /// Each entity's row plan and rows database, by entity number (model entity numbers are
    /// small and dense): a point lookup reads them without hashing.
    private let access: [(plan: RowCodec.Plan, rows: MDB_dbi)?]

    /// Where write transactions are logged (``StoreLog``).
    let log: StoreLog

    init(
        environment: LMDBEnvironment, layout: DatabaseLayout, databases: Databases, storeName: String? = nil,
        log: StoreLog = .off
    ) {
        self.log = log
        self.environment = environment
        self.layout = layout
        self.databases = databases
        self.storeName = storeName ?? environment.path
        self.targets = ReferenceTargets(model: layout.model)
        var access = [(plan: RowCodec.Plan, rows: MDB_dbi)?](
            repeating: nil, count: Int(layout.plans.keys.max() ?? 0) + 1)
        for (entity, plan) in layout.plans where entity >= 0 {
            if let root = layout.rootOf[entity], let rows = databases.rows[root] { access[Int(entity)] = (plan, rows) }
        }
        self.access = access
    }

    /// The row plan and rows database of `entity`, or `nil` when the store has no such entity.
    @inline(__always) func access(_ entity: Int32) -> (plan: RowCodec.Plan, rows: MDB_dbi)? {
        entity >= 0 && Int(entity) < access.count ? access[Int(entity)] : nil
    }

    public var capabilities: DriverCapabilities {
        [.predicatePushdown, .sortPushdown, .countPushdown, .concurrentReads]
    }

    var model: ManagedObjectModel { layout.model }

    /// The map size in bytes right now (it grows as the store fills).
    public var mapSize: Int { environment.mapSize }

    // MARK: Metadata

    public func loadMetadata() throws -> StoreMetadata {
        try ensureOpen()
        return try environment.read { txn in try Self.readMetadata(txn, databases.meta, store: storeName) }
    }

    public func saveMetadata(_ metadata: StoreMetadata) throws {
        try ensureOpen()
        try environment.write { txn in try Self.writeMetadata(metadata, txn, databases.meta) }
    }

    static func readMetadata(_ txn: LMDBTransaction, _ meta: MDB_dbi, store: String) throws -> StoreMetadata {
        do {
            let uuid = try txn.get(meta, Array("uuid".utf8)).map { String(decoding: $0, as: UTF8.self) } ?? ""
            let type =
                try txn.get(meta, Array("storeType".utf8)).map { String(decoding: $0, as: UTF8.self) }
                ?? StoreType.lmdbName
            var hashes: [String: Data] = [:]
            if let raw = try txn.get(meta, Array("hashes".utf8)) {
                hashes = try MetadataCodec.hashes(from: MetadataCodec.decode(raw))
            }
            var values: [String: MetadataValue] = [:]
            if let raw = try txn.get(meta, Array("values".utf8)) {
                guard case .dictionary(let entries) = try MetadataCodec.decode(raw) else {
                    throw FormatError("metadata values are not a dictionary")
                }
                values = entries
            }
            return StoreMetadata(uuid: uuid, storeType: type, entityVersionHashes: hashes, values: values)
        } catch let error as FormatError {
            throw StoreError(
                .corrupt, "the metadata database is malformed (\(error)); restore the store from a backup", store: store
            )
        }
    }

    static func writeMetadata(_ metadata: StoreMetadata, _ txn: LMDBTransaction, _ meta: MDB_dbi) throws {
        try txn.put(meta, Array("uuid".utf8), Array(metadata.uuid.utf8))
        try txn.put(meta, Array("storeType".utf8), Array(metadata.storeType.utf8))
        try txn.put(
            meta, Array("hashes".utf8), MetadataCodec.encode(MetadataCodec.hashes(metadata.entityVersionHashes)))
        try txn.put(meta, Array("values".utf8), MetadataCodec.encode(.dictionary(metadata.values)))
    }

    // MARK: Keys

    public func allocatePrimaryKeys(forEntity entity: Int32, count: Int) throws -> ClosedRange<Int64> {
        try ensureOpen()
        guard let root = layout.rootOf[entity] else {
            throw StoreError(.invalidRequest, "no entity numbered \(entity) in the model", store: storeName)
        }
        return try environment.write { txn in
            let current = try maximumKey(root, txn)
            let (last, overflow) = current.addingReportingOverflow(Int64(max(count, 1)))
            guard !overflow else {
                throw StoreError(
                    .corrupt,
                    "the primary-key counter of \(model.entity(number: root)?.name ?? "entity \(root)") is \(current); \(max(count, 1)) more keys would pass \(Int64.max). The counter is damaged or the keys are used up; restore the store from a backup",
                    store: storeName)
            }
            try setMaximumKey(root, last, txn)
            return (current + 1)...last
        }
    }

    static func primaryKeyKey(_ root: Int32) -> [UInt8] {
        var writer = ByteWriter(capacity: 6)
        writer.append(contentsOf: Array("pk".utf8))
        writer.appendBigEndian(UInt32(bitPattern: root))
        return writer.bytes
    }

    func maximumKey(_ root: Int32, _ txn: LMDBTransaction) throws -> Int64 {
        guard let raw = try txn.get(databases.meta, Self.primaryKeyKey(root)) else { return 0 }
        var reader = ByteReader(raw)
        let value: Int64
        do { value = try reader.littleEndian(Int64.self) } catch {
            throw StoreError(
                .corrupt, "the primary-key counter is malformed; restore the store from a backup", store: storeName)
        }
        guard value >= 0 else {
            throw StoreError(
                .corrupt, "the primary-key counter is \(value), below zero; restore the store from a backup",
                store: storeName)
        }
        return value
    }

    func setMaximumKey(_ root: Int32, _ key: Int64, _ txn: LMDBTransaction) throws {
        var writer = ByteWriter(capacity: 8)
        writer.appendLittleEndian(key)
        try txn.put(databases.meta, Self.primaryKeyKey(root), writer.bytes)
    }

    // MARK: Lifecycle

    public func close() throws {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        EnvironmentRegistry.release(environment)
    }

    deinit {
        // A driver dropped without close() must not keep its environment mapped for the rest of
        // the process (a later open of a file replaced at the same path would read the old map).
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { EnvironmentRegistry.release(environment) }
    }

    func ensureOpen() throws {
        if closed.load(ordering: .acquiring) { throw StoreError(.closed, "the store was closed", store: storeName) }
    }

    // MARK: Rows

    func rowsDatabase(_ entity: Int32) throws -> MDB_dbi {
        if let known = access(entity) { return known.rows }
        guard let root = layout.rootOf[entity], let dbi = databases.rows[root] else {
            throw StoreError(.invalidRequest, "no entity numbered \(entity) in the model", store: storeName)
        }
        return dbi
    }

    /// Decodes the row of `id` inside `txn`, or `nil` when it does not exist.
    func row(_ id: RowID, _ txn: LMDBTransaction) throws -> RowSnapshot? {
        guard let (plan, rows) = access(id.entity), let raw = try txn.get(rows, row: id) else { return nil }
        return try decode(raw, id: id, plan: plan)
    }

    /// Decodes a row like ``decode(_:id:plan:)``, or takes its values from `cached` when the row
    /// cache holds the row at the version in its header and the probe asks for it (a malformed
    /// header is decoded, and so reported, as usual).
    func decode(
        _ raw: UnsafeRawBufferPointer, id: RowID, plan: RowCodec.Plan, cached: inout CachedRows.Probe?
    ) throws -> RowSnapshot {
        // A header that does not parse is not an error here: the row is decoded below, which reports it.
        if cached != nil, let version = try? RowCodec.version(of: raw),
            let values = cached?.values(of: id, version: version)
        {
            return RowSnapshot(id: id, version: version, values: values)
        }
        return try decode(raw, id: id, plan: plan)
    }

    /// Decodes a row body and checks its references (``checkReferences(_:)``).
    func decode(_ raw: UnsafeRawBufferPointer, id: RowID, plan: RowCodec.Plan) throws -> RowSnapshot {
        let row: RowSnapshot
        do { row = try RowCodec.decode(raw, id: id, plan: plan) } catch let error as FormatError {
            throw StoreError(
                .corrupt, "row \(id) is malformed (\(error)); restore the store from a backup", store: storeName)
        }
        try checkReferences(row)
        return row
    }

    public func rows(for ids: [RowID]) throws -> [RowSnapshot] {
        try ensureOpen()
        return try environment.read { txn in try ids.compactMap { try row($0, txn) } }
    }
}
