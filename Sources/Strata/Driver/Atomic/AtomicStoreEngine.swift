import Foundation
import Synchronization

// ATOMIC STORE ENGINE INVARIANTS
// A1. Every row of `rows` belongs to an entity of the model and has one value per property.
// A2. A row's version only grows; an applied update adds exactly 1; inserts start at 1.
// A3. `maxKeys[root]` is at least the largest primary key ever stored or handed out in that hierarchy.
// A4. `apply` validates the whole batch before changing anything; a persist hook that throws
//     leaves the state as it was.

/// The whole-graph, in-memory row engine shared by the atomic drivers (in-memory and XML): rows
/// in memory, every predicate, sort and page applied exactly by the core's evaluator.
///
/// Thread safety: all state sits behind a `Mutex`; every method may be called from any thread.
public final class AtomicStoreEngine: Sendable {
    /// Everything an atomic store holds; what the XML driver writes to disk.
    public struct State: Sendable {
        /// Rows by entity number, then primary key.
        public var rows: [Int32: [Int64: RowSnapshot]] = [:]
        /// The largest primary key handed out per inheritance root.
        public var maxKeys: [Int32: Int64] = [:]
        /// The store's metadata.
        public var metadata: StoreMetadata

        /// Creates an empty state.
        public init(metadata: StoreMetadata) { self.metadata = metadata }

        /// The row of `id`, or `nil`.
        public func row(_ id: RowID) -> RowSnapshot? { rows[id.entity]?[id.primaryKey] }

        /// Every row, ordered by entity number and primary key.
        public var allRows: [RowSnapshot] {
            // keys come from rows
            rows.keys.sorted().flatMap { entity in
                var part = Array(rows[entity]!.values)
                PrimaryKeyOrder.order(&part)
                return part
            }
        }

        /// The number of rows.
        public var count: Int { rows.values.reduce(0) { $0 + $1.count } }
    }

    /// The model of the rows.
    public let model: ManagedObjectModel
    /// A name for messages (the file path or store type).
    public let storeName: String
    private let state: Locked<State>

    /// Creates an engine holding `state`.
    public init(model: ManagedObjectModel, storeName: String, state: State) {
        self.model = model
        self.storeName = storeName
        self.state = Locked(state)
    }

    /// A copy of the current state.
    public var snapshot: State { state.withLock { $0 } }

    /// The current metadata.
    public var metadata: StoreMetadata { state.withLock { $0.metadata } }

    /// Replaces the metadata, after `persist` (if given) accepted the new state.
    public func setMetadata(_ metadata: StoreMetadata, persist: ((State) throws -> Void)? = nil) throws {
        try state.withLock { current in
            var next = current
            next.metadata = metadata
            try persist?(next)
            current = next
        }
    }

    /// Answers a fetch completely: predicate, sort and page applied by the core's evaluator.
    public func fetch(_ request: StoreFetch) throws -> StoreFetchResult {
        let current = state.withLock { $0 }
        let lookup: (RowID) -> RowSnapshot? = { current.row($0) }
        // Rows are tested where they lie, so only matching ones are copied (and retained).
        let compiled = request.predicate.flatMap { CompiledRowPredicate($0, entity: request.entity) }
        let countsAll = request.resultKind == .count && request.offset == 0 && request.limit == nil
        var matching: [RowSnapshot] = []
        for number in request.entityNumbers.sorted() {
            guard let table = current.rows[number] else { continue }
            var part: [RowSnapshot] = []
            if let compiled {
                // One integer comparison (`age BETWEEN {30, 40}`) reads the slot in place: copying
                // each row out to test it retains its values, a cache miss per row of the table.
                let integerTest = compiled.integerComparison
                for index in table.indices {
                    if let integerTest, case .integer(let value) = table.values[index].values[integerTest.slot] {
                        if integerTest.matches(value) { part.append(table.values[index]) }
                    } else if try compiled.matches(table.values[index].values) {
                        part.append(table.values[index])
                    }
                }
            } else if let predicate = request.predicate {
                for row in table.values where try predicate.evaluate(with: RowView(row, model: model, lookup: lookup)) {
                    part.append(row)
                }
            } else {
                part.append(contentsOf: table.values)
            }
            // Each entity's rows in key order, entities in number order: row-ID order (a count
            // needs no order).
            if !countsAll { PrimaryKeyOrder.order(&part) }
            if matching.isEmpty { matching = part } else { matching.append(contentsOf: part) }
        }
        if !request.sort.isEmpty, !countsAll {
            matching = try RowSorter.sort(matching, by: request.sort, model: model, lookup: lookup)
        }
        if countsAll {
            return StoreFetchResult(count: matching.count, appliedPredicate: true, appliedSort: true, appliedPage: true)
        }
        let page =
            request.offset == 0 && request.limit == nil
            ? matching : Array(matching.dropFirst(request.offset).prefix(request.limit ?? Int.max))
        switch request.resultKind {
        case .rows:
            return StoreFetchResult(rows: page, appliedPredicate: true, appliedSort: true, appliedPage: true)
        case .ids:
            return StoreFetchResult(ids: page.map(\.id), appliedPredicate: true, appliedSort: true, appliedPage: true)
        case .count:
            return StoreFetchResult(count: page.count, appliedPredicate: true, appliedSort: true, appliedPage: true)
        }
    }

    /// The current rows of `ids`; missing rows are left out.
    public func rows(for ids: [RowID]) -> [RowSnapshot] {
        state.withLock { current in ids.compactMap { current.row($0) } }
    }

    /// Reserves `count` keys in the hierarchy of `entity`.
    public func allocatePrimaryKeys(
        forEntity entity: Int32, count: Int, persist: ((State) throws -> Void)? = nil
    ) throws -> ClosedRange<Int64> {
        guard let root = model.entity(number: entity).flatMap({ model.entity(named: $0.rootEntityName) }) else {
            throw StoreError(.invalidRequest, "no entity numbered \(entity) in the model", store: storeName)
        }
        return try state.withLock { current in
            var next = current
            let used = next.maxKeys[root.entityNumber] ?? 0
            guard used >= 0, Int64.max - used >= Int64(max(count, 1)) else {
                throw StoreError(
                    .full,
                    "store \(storeName) has no primary keys left for entity '\(root.name)' (the counter is at \(used)); copy the objects into a new store",
                    store: storeName)
            }
            let first = used + 1
            let last = used + Int64(max(count, 1))
            next.maxKeys[root.entityNumber] = last
            try persist?(next)
            current = next
            return first...last
        }
    }

    /// Applies a change set all-or-nothing.
    ///
    /// - Parameter persist: Called with the complete new state before it replaces the old one (the
    ///   XML driver writes its file here); when it throws, nothing changes.
    /// - Throws: ``StoreError/Code/conflict`` naming stale rows; ``StoreError/Code/corrupt`` for
    ///   rows that do not fit the model; whatever `persist` throws.
    public func apply(_ batch: ChangeBatch, persist: ((State) throws -> Void)? = nil) throws -> CommitResult {
        try state.withLock { current in
            try validate(batch, against: current)
            var versions: [RowID: RowVersion] = [:]
            if let persist {
                // Changed in place (copying every table per save would cost O(store)); the rows the
                // batch replaces are kept so a failed persist puts them back.
                let undo = Undo(batch, current)
                versions = write(batch, into: &current)
                do { try persist(current) } catch {
                    undo.restore(into: &current)
                    throw error
                }
            } else {
                versions = write(batch, into: &current)
            }
            return CommitResult(versions: versions)
        }
    }

    /// Applies the change sets `next` hands out as one all-or-nothing change
    /// (``StoreDriver/apply(inParts:)``): each is checked and written into the state as it comes,
    /// holding one at a time, and `persist` is called once with the final state. When `next`, a
    /// change set or `persist` throws, every change set already written is undone, newest first.
    /// The engine's lock is held throughout; `next` must not call the engine.
    public func apply(
        inParts next: (_ first: Bool) throws -> ChangeBatch?, persist: ((State) throws -> Void)? = nil
    ) throws -> CommitResult {
        try state.withLock { current in
            var undos: [Undo] = []
            do {
                let result = try ChangeBatch.forEachPart(of: next) { part in
                    try validate(part, against: current)
                    undos.append(Undo(part, current))
                    return CommitResult(versions: write(part, into: &current))
                }
                try persist?(current)
                return result
            } catch {
                for undo in undos.reversed() { undo.restore(into: &current) }
                throw error
            }
        }
    }

    /// What a batch replaces in a state, to restore it when persisting the new state fails.
    private struct Undo {
        var replaced: [RowSnapshot] = []
        var inserted: [RowID] = []
        var maxKeys: [Int32: Int64]
        var metadata: StoreMetadata

        init(_ batch: ChangeBatch, _ state: State) {
            maxKeys = state.maxKeys
            metadata = state.metadata
            for id in batch.updates.map(\.id) + batch.deletes.map(\.id) {
                if let row = state.row(id) { replaced.append(row) }
            }
            inserted = batch.inserts.map(\.id)
        }

        func restore(into state: inout State) {
            for id in inserted { state.rows[id.entity]?[id.primaryKey] = nil }
            for row in replaced { state.rows[row.id.entity, default: [:]][row.id.primaryKey] = row }
            state.maxKeys = maxKeys
            state.metadata = metadata
        }
    }

    private func validate(_ batch: ChangeBatch, against current: State) throws {
        var stale: [RowID] = []
        for update in batch.updates {
            guard let row = current.row(update.id) else {
                stale.append(update.id)
                continue
            }
            if row.version != update.expectedVersion { stale.append(update.id) }
            if row.version == RowVersion.max {
                throw StoreError(
                    .corrupt,
                    "store \(storeName): row \(update.id) is at the last row version (\(row.version)) and cannot be updated; copy the object into a new row",
                    store: storeName)
            }
        }
        for delete in batch.deletes {
            guard let row = current.row(delete.id) else {
                stale.append(delete.id)
                continue
            }
            if row.version != delete.expectedVersion { stale.append(delete.id) }
        }
        if !stale.isEmpty {
            throw StoreError(
                .conflict,
                "\(stale.count) row\(stale.count == 1 ? " was" : "s were") changed or deleted by another save: \(stale.prefix(10).map(\.description).joined(separator: ", "))",
                store: storeName,
                objectIDs: stale.compactMap { id in
                    model.entity(number: id.entity).map { ManagedObjectID(entity: $0, rowID: id, store: nil) }
                })
        }
        var insertedIDs = Set<RowID>()
        for insert in batch.inserts {
            guard let entity = model.entity(number: insert.id.entity), insert.values.count == entity.properties.count
            else {
                throw StoreError(.corrupt, "inserted row \(insert.id) does not fit the model", store: storeName)
            }
            if current.row(insert.id) != nil || !insertedIDs.insert(insert.id).inserted {
                throw StoreError(.constraint, "a row with ID \(insert.id) already exists", store: storeName)
            }
        }
        for update in batch.updates {
            let width = model.entity(number: update.id.entity)?.properties.count ?? -1
            guard update.values.count == width, update.changedSlots.allSatisfy({ (0..<width).contains($0) }) else {
                throw StoreError(.corrupt, "update of row \(update.id) does not fit the model", store: storeName)
            }
        }
    }

    private func write(_ batch: ChangeBatch, into state: inout State) -> [RowID: RowVersion] {
        var versions: [RowID: RowVersion] = [:]
        for delete in batch.deletes { state.rows[delete.id.entity]?[delete.id.primaryKey] = nil }
        if batch.inserts.count > 64, let first = batch.inserts.first {
            state.rows[first.id.entity, default: [:]].reserveCapacity(
                (state.rows[first.id.entity]?.count ?? 0) + batch.inserts.count)
        }
        for insert in batch.inserts {
            var row = insert
            row.version = 1
            state.rows[row.id.entity, default: [:]][row.id.primaryKey] = row
            if let root = model.entity(number: row.id.entity)?.rootEntityNumber {
                state.maxKeys[root] = max(state.maxKeys[root] ?? 0, row.id.primaryKey)
            }
        }
        for update in batch.updates {
            // validate(_:against:) checked that the row exists.
            var row = state.rows[update.id.entity]![update.id.primaryKey]!
            for slot in update.changedSlots { row.values[slot] = update.values[slot] }
            row.version += 1
            state.rows[update.id.entity]![update.id.primaryKey] = row
            versions[row.id] = row.version
        }
        if let metadata = batch.metadata { state.metadata = metadata }
        return versions
    }
}
