import Foundation
import Strata
import Synchronization

// XML DRIVER INVARIANTS
// X1. The engine holds exactly the graph of the last complete save (or of the file as opened);
//     the file is rewritten whole, through XMLStoreFile.replace, inside the engine's persist hook,
//     so a save that fails to write changes neither the file nor the engine.
// X2. Primary key N is object id "zN". Keys this driver hands out come from one counter for the
//     whole file (`nextObjectID`), so ids stay unique across entities; the counter only grows, and
//     is written with every save and at close. Rows inserted with keys from elsewhere (a
//     conversion keeps another driver's per-hierarchy keys) may share N with another hierarchy's
//     row: the encoder then gives the second a fresh id past every key and writes its key as
//     `pk="N"`, which the loader reads back.
// X3. A writer holds the store's lock from open to close (XMLStoreFile F3); a read-only driver
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
    private let keys: Mutex<KeyCounter>
    private let isClosed = Atomic<Bool>(false)
    /// Where the file's chunks are and which chunks changed since (XMLChunkLayout.swift).
    private let reuse: Mutex<Reuse>

    private struct Reuse {
        var layout: XMLChunkLayout?
        var dirty: Set<Int64> = []
        /// Bytes the last save copied from the file it replaced.
        var copied = 0
    }

    /// Bytes the last save copied from the file it replaced instead of encoding them.
    var lastSaveCopiedBytes: Int { reuse.withLock { $0.copied } }

    private struct KeyCounter {
        /// The next free object number.
        var next: Int64
        /// The number last written to the file.
        var written: Int64
    }

    init(engine: AtomicStoreEngine, file: XMLStoreFile, nextObjectID: Int64, isReadOnly: Bool, layout: XMLChunkLayout? = nil) {
        self.engine = engine
        self.reuse = Mutex(Reuse(layout: layout))
        self.file = file
        self.isReadOnly = isReadOnly
        self.encoder = XMLStoreEncoder(model: engine.model)
        self.keys = Mutex(KeyCounter(next: nextObjectID, written: nextObjectID))
    }

    /// Where the store lives.
    public var url: URL { file.url }

    public var capabilities: DriverCapabilities {
        [.predicatePushdown, .sortPushdown, .countPushdown, .concurrentReads, .inMemory]
    }

    public func loadMetadata() throws -> StoreMetadata { engine.metadata }

    public func saveMetadata(_ metadata: StoreMetadata) throws {
        try ensureWritable()
        try engine.setMetadata(metadata, persist: persist)
    }

    public func fetch(_ request: StoreFetch) throws -> StoreFetchResult { try engine.fetch(request) }

    public func rows(for ids: [RowID]) throws -> [RowSnapshot] { engine.rows(for: ids) }

    /// Hands out keys from the file's single `nextObjectID` counter (X2), whatever the entity.
    public func allocatePrimaryKeys(forEntity entity: Int32, count: Int) throws -> ClosedRange<Int64> {
        try ensureWritable()
        guard engine.model.entity(number: entity) != nil else {
            throw StoreError(.invalidRequest, "no entity numbered \(entity) in the model", store: file.path)
        }
        return keys.withLock { counter in
            let first = counter.next
            counter.next += Int64(max(count, 1))
            return first...(counter.next - 1)
        }
    }

    public func apply(_ batch: ChangeBatch) throws -> CommitResult {
        try ensureWritable()
        // Marked before the engine applies the batch (R3); a failed save leaves them marked,
        // which only costs encoding them again.
        reuse.withLock { reuse in
            guard reuse.layout != nil else { return }
            for row in batch.inserts { reuse.dirty.insert(XMLChunkLayout.chunk(of: row.id.primaryKey)) }
            for row in batch.updates { reuse.dirty.insert(XMLChunkLayout.chunk(of: row.id.primaryKey)) }
            for row in batch.deletes { reuse.dirty.insert(XMLChunkLayout.chunk(of: row.id.primaryKey)) }
        }
        return try engine.apply(batch, persist: persist)
    }

    /// Writes the file once more if keys were handed out since the last save (so a reopened store
    /// never hands them out again), then releases the lock. Idempotent.
    public func close() throws {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        defer { file.unlock() }
        guard !isReadOnly else { return }
        let pending = keys.withLock { $0.next != $0.written }
        if pending { try persist(engine.snapshot) }
    }

    /// Writes `state` as the new file (the engine's persist hook).
    private func persist(_ state: AtomicStoreEngine.State) throws {
        let largest = state.maxKeys.values.max() ?? 0  // the engine raises these with every insert
        let next = keys.withLock { max($0.next, largest + 1) }
        let known = reuse.withLock { $0 }
        var ranges: [Int64: Range<Int>]?
        var copied = 0
        let identity = try file.replace { writer in
            // The old file, when it is still the one the layout describes (R2) and its positions
            // check out (R4); otherwise every object is encoded.
            let mapped = known.layout.flatMap { XMLMappedFile(path: file.path, expected: $0.file) }
            defer { mapped?.unmap() }
            let source = mapped.flatMap { mapped in
                known.layout?.ranges(in: mapped.bytes).map { XMLReuseSource(bytes: mapped.bytes, ranges: $0, dirty: known.dirty) }
            }
            (ranges, copied) = try encoder.write(state, nextObjectID: next, store: file.path, reuse: source, to: &writer)
        }
        reuse.withLock { reuse in
            reuse.dirty = []
            reuse.copied = copied
            if let identity, let ranges {
                reuse.layout = XMLChunkLayout(file: identity, positions: .bytes(ranges))
            } else {
                reuse.layout = nil
            }
        }
        keys.withLock { counter in
            counter.next = max(counter.next, next)
            counter.written = next
        }
    }

    private func ensureWritable() throws {
        if isClosed.load(ordering: .acquiring) { throw StoreError(.closed, "the XML store was closed", store: file.path) }
        if isReadOnly {
            throw StoreError(.readOnly, "the XML store was opened read-only; open it without isReadOnly to save", store: file.path)
        }
    }
}
