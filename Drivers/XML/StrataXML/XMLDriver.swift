import Foundation
import Strata
import Synchronization

// XML DRIVER INVARIANTS
// X1. The engine holds exactly the graph of the file, plus the change sets applied with deferred
//     durability since the file was last written (`Reuse.unwritten`): the file is rewritten
//     whole, through XMLStoreFile.replace, inside the engine's persist hook, by every immediate
//     save (an empty one only when something is unwritten), key reservation and metadata save. A
//     save that fails before the rename changes neither the file nor the engine; one whose rename
//     happened but whose directory fsync failed (XMLStoreFile F5) leaves both holding the new
//     graph and then throws. A deferred save changes the engine only.
// X2. Primary key N is object id "zN". Keys this driver hands out come from one counter for the
//     whole file (`KeyCounter.next`), so ids stay unique across entities; the counter only grows.
//     Rows inserted with keys from elsewhere (a conversion keeps another driver's per-hierarchy
//     keys) may share N with another hierarchy's row: the encoder then gives the second a fresh id
//     past every key and writes its key as `pk="N"`, which the loader reads back.
// X3. Every key handed out is below the `<nextObjectID>` of the file on disk before it is handed
//     out (`KeyCounter.reserved`): when an allocation would pass it, the file is first written with
//     a reservation `keyReservation` (or the allocation's size) beyond, so a crash or a reopen never
//     hands a key out twice, and only one allocation in many pays for a write.
// X4. A writer holds the store's lock from open to close (XMLStoreFile F3); a read-only driver
//     never writes and never locks.

/// The XML store: Core Data's XML store layout (docs/formats/xml.md), an atomic store.
///
/// The whole graph is loaded at open into the core's ``AtomicStoreEngine``, the same engine the
/// in-memory driver uses, so predicates, sorts and pages run in memory exactly as the core
/// evaluates them. Each save writes the whole file to a temporary file in the same directory,
/// fsyncs it, renames it over the store and fsyncs the directory: a crash leaves the old file or
/// the new one. One writer per file (an advisory lock beside it); read-only opens see the last
/// complete save.
///
/// Thread safety: `Sendable`; the engine's lock serializes state changes, the key counter has its
/// own lock, and the coordinator serializes writes (``StoreDriver``'s calling contract).
public final class XMLDriver: StoreDriver {
    /// The rows, in memory. Changed only through the driver, which tracks what each save changes
    /// (R3 in XMLChunkLayout.swift).
    let engine: AtomicStoreEngine
    /// Whether saves are refused.
    public let isReadOnly: Bool
    private let file: XMLStoreFile
    private let encoder: XMLStoreEncoder
    private let keys: Locked<KeyCounter>
    private let isClosed = Atomic<Bool>(false)
    /// Where the file's chunks are and which chunks changed since (XMLChunkLayout.swift).
    private let reuse: Locked<Reuse>

    private struct Reuse {
        var layout: XMLChunkLayout?
        var dirty: Set<Int64> = []
        /// Bytes the last save copied from the file it replaced.
        var copied = 0
        /// Whether the engine holds deferred change sets the file does not (X1).
        var unwritten = false
    }

    /// Bytes the last save copied from the file it replaced instead of encoding them.
    var lastSaveCopiedBytes: Int { reuse.withLock { $0.copied } }

    private struct KeyCounter {
        /// The next key to hand out.
        var next: Int64
        /// The `<nextObjectID>` of the file on disk: every key handed out is below it (X3).
        var reserved: Int64
    }

    /// How many keys past an allocation the file reserves when it must be written for one (X3).
    static let keyReservation: Int64 = 1_024

    /// Where file writes are logged (``StoreLog``).
    let log: StoreLog

    init(
        engine: AtomicStoreEngine, file: XMLStoreFile, nextObjectID: Int64, isReadOnly: Bool,
        layout: XMLChunkLayout? = nil,
        log: StoreLog = .off
    ) {
        self.log = log
        self.engine = engine
        self.reuse = Locked(Reuse(layout: layout))
        self.file = file
        self.isReadOnly = isReadOnly
        self.encoder = XMLStoreEncoder(model: engine.model)
        self.keys = Locked(KeyCounter(next: nextObjectID, reserved: nextObjectID))
    }

    /// Where the store lives.
    public var url: URL { file.url }

    public var capabilities: DriverCapabilities {
        [.predicatePushdown, .sortPushdown, .countPushdown, .concurrentReads, .inMemory]
    }

    public func loadMetadata() throws -> StoreMetadata { engine.metadata }

    public func saveMetadata(_ metadata: StoreMetadata) throws {
        try ensureWritable()
        try persisting { hook in try engine.setMetadata(metadata, persist: { try hook($0, nil) }) }
    }

    public func fetch(_ request: StoreFetch) throws -> StoreFetchResult { try engine.fetch(request) }

    public func rows(for ids: [RowID]) throws -> [RowSnapshot] { engine.rows(for: ids) }

    /// Hands out keys from the file's single `nextObjectID` counter (X2), whatever the entity, after
    /// the file records a reservation past them (X3).
    ///
    /// - Throws: ``StoreError/Code/corrupt`` when the counter cannot go further (the file's ids
    ///   reach `Int64.max`); whatever writing the reservation throws (no keys are handed out then).
    public func allocatePrimaryKeys(forEntity entity: Int32, count: Int) throws -> ClosedRange<Int64> {
        try ensureWritable()
        guard engine.model.entity(number: entity) != nil else {
            throw StoreError(.invalidRequest, "no entity numbered \(entity) in the model", store: file.path)
        }
        let wanted = Int64(max(count, 1))
        let counter = keys.withLock { $0 }
        let (end, overflow) = counter.next.addingReportingOverflow(wanted)
        guard !overflow else {
            throw StoreError(
                .corrupt,
                "the store's object ids are used up: the next is \(counter.next) and \(wanted) more would pass \(Int64.max). The file's <nextObjectID> or an object id is damaged; restore the store from a backup",
                store: file.path)
        }
        if end > counter.reserved {
            // Reserve past the allocation before handing it out (X3). The coordinator serializes
            // allocations with saves, so the engine does not change under this write.
            let (reservation, beyond) = end.addingReportingOverflow(max(Self.keyReservation, wanted))
            try persisting { hook in try hook(engine.snapshot, beyond ? .max : reservation) }
        }
        return keys.withLock { counter in
            let first = counter.next
            counter.next = first + wanted
            return first...(counter.next - 1)
        }
    }

    /// Applies a change set to the engine and, unless it is deferred, writes the whole file (X1).
    /// A deferred change set is kept in memory until the next immediate one, key reservation or
    /// metadata save writes the file; an empty immediate one writes only when deferred changes
    /// are pending, so a bulk load writes the file once.
    public func apply(_ batch: ChangeBatch) throws -> CommitResult {
        try ensureWritable()
        if batch.isEmpty, batch.durability == .immediate, !reuse.withLock({ $0.unwritten }) {
            return CommitResult(versions: [:])
        }
        // Marked before the engine applies the batch (R3); a failed save leaves them marked,
        // which only costs encoding them again.
        markDirty(batch)
        if batch.durability == .deferred {
            let result = try log.logged(
                "keeping in memory for \(file.url.path) (deferred): \(batch.inserts.count) inserts, \(batch.updates.count) updates, \(batch.deletes.count) deletes"
            ) { try engine.apply(batch) }
            reuse.withLock { $0.unwritten = true }
            // Keys inserted here are never handed out later (rule 10), written or not.
            let largest = engine.snapshot.maxKeys.values.max() ?? 0
            keys.withLock { $0.next = max($0.next, largest == .max ? .max : largest + 1) }
            return result
        }
        return try log.logged(
            "writing \(file.url.path): \(batch.inserts.count) inserts, \(batch.updates.count) updates, \(batch.deletes.count) deletes"
        ) { try persisting { hook in try engine.apply(batch, persist: { try hook($0, nil) }) } }
    }

    /// Writes each change set into the engine's graph as it comes, then the whole file once (X1);
    /// a failure undoes every change set and leaves the file as it was.
    public func apply(inParts next: (_ first: Bool) throws -> ChangeBatch?) throws -> CommitResult {
        try ensureWritable()
        return try log.logged("writing \(file.url.path) from a change in parts") {
            try persisting { hook in
                try engine.apply(
                    inParts: { first in
                        guard let part = try next(first) else { return nil }
                        markDirty(part)
                        return part
                    }, persist: { try hook($0, nil) })
            }
        }
    }

    /// Marks the chunks of the file `batch` changes for encoding again (R3).
    private func markDirty(_ batch: ChangeBatch) {
        reuse.withLock { reuse in
            guard reuse.layout != nil else { return }
            for row in batch.inserts { reuse.dirty.insert(XMLChunkLayout.chunk(of: row.id.primaryKey)) }
            for row in batch.updates { reuse.dirty.insert(XMLChunkLayout.chunk(of: row.id.primaryKey)) }
            for row in batch.deletes { reuse.dirty.insert(XMLChunkLayout.chunk(of: row.id.primaryKey)) }
        }
    }

    /// Releases the lock. Every key handed out is already below the file's `<nextObjectID>` (X3),
    /// so nothing is written; deferred change sets not yet written are dropped (``StoreDriver``
    /// rule 9). Idempotent.
    public func close() throws {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        file.unlock()
    }

    /// Runs `operation` with a hook that writes a state to the file (with an optional key
    /// reservation). When the file was replaced but its directory not fsynced, the hook returns
    /// normally, so the engine takes the state the file now holds (X1), and the error is thrown
    /// once `operation` is done.
    private func persisting<T>(_ operation: (@escaping (AtomicStoreEngine.State, Int64?) throws -> Void) throws -> T)
        throws -> T
    {
        var late: StoreError?
        let result = try operation { state, reservation in
            do {
                try self.persist(state, reserving: reservation)
            } catch let replaced as XMLStoreFile.Replaced {
                late = replaced.error
            }
        }
        if let late { throw late }
        return result
    }

    /// Writes `state` as the new file, with `<nextObjectID>` at least `reservation`.
    ///
    /// - Throws: ``XMLStoreFile/Replaced`` when the file was replaced but not made durable; the
    ///   driver's record of the file (chunk layout, key reservation) then describes the new file.
    private func persist(_ state: AtomicStoreEngine.State, reserving reservation: Int64?) throws {
        let largest = state.maxKeys.values.max() ?? 0  // the engine raises these with every insert
        let counter = keys.withLock { $0 }
        let next = max(counter.reserved, reservation ?? 0, largest == .max ? .max : largest + 1)
        let known = reuse.withLock { $0 }
        var ranges: [Int64: Range<Int>]?
        var copied = 0
        var identity: FileIdentity?
        var replaced: XMLStoreFile.Replaced?
        do {
            identity = try file.replace { writer in
                // The old file, when it is still the one the layout describes (R2) and its positions
                // check out (R4); otherwise every object is encoded.
                let mapped = known.layout.flatMap { XMLMappedFile(path: file.target, expected: $0.file) }
                defer { mapped?.unmap() }
                let source = mapped.flatMap { mapped in
                    known.layout?.ranges(in: mapped.bytes).map {
                        XMLReuseSource(bytes: mapped.bytes, ranges: $0, dirty: known.dirty)
                    }
                }
                (ranges, copied) = try encoder.write(
                    state, nextObjectID: next, store: file.path, reuse: source, to: &writer)
            }
        } catch let error as XMLStoreFile.Replaced {
            identity = error.identity
            replaced = error
        }
        reuse.withLock { reuse in
            reuse.dirty = []
            reuse.unwritten = false
            reuse.copied = copied
            if let identity, let ranges {
                reuse.layout = XMLChunkLayout(file: identity, positions: .bytes(ranges))
            } else {
                reuse.layout = nil
            }
        }
        keys.withLock { counter in
            counter.next = max(counter.next, largest == .max ? .max : largest + 1)
            counter.reserved = next
        }
        if let replaced { throw replaced }
    }

    private func ensureWritable() throws {
        if isClosed.load(ordering: .acquiring) {
            throw StoreError(.closed, "the XML store was closed", store: file.path)
        }
        if isReadOnly {
            throw StoreError(
                .readOnly, "the XML store was opened read-only; open it without isReadOnly to save", store: file.path)
        }
    }
}
