import CLMDB
import Foundation
import Strata

extension LMDBDriver {
    /// The members of a to-many relationship, read from the reverse index of its to-one inverse or
    /// from the links database, without scanning rows; ordered relationships follow their stored
    /// order list.
    public func relatedRows(_ request: RelatedRowsRequest) throws -> [RowID: [RowID]] {
        try ensureOpen()
        return try environment.read { txn in
            var result: [RowID: [RowID]] = [:]
            for source in request.sources { result[source] = try members(of: source, slot: request.slot, txn) }
            return result
        }
    }

    /// The members of a to-many relationship and their rows, in one read transaction: one
    /// snapshot for both (a member is never listed without its row because a save came between
    /// two reads), and one transaction's cost per to-many fault instead of two.
    public func relatedRowsWithDestinations(_ request: RelatedRowsRequest) throws -> RelatedRows {
        try ensureOpen()
        return try environment.read { txn in
            var found: [RowID: [RowID]] = [:]
            var rows: [RowSnapshot] = []
            var asked = SeenRowIDs()
            for source in request.sources {
                let list = try members(of: source, slot: request.slot, txn)
                found[source] = list
                for id in list where asked.insert(id) {
                    if let row = try row(id, txn) { rows.append(row) }
                }
            }
            return RelatedRows(members: found, rows: rows)
        }
    }

    /// The members of `slot` of `source` inside `txn`.
    func members(of source: RowID, slot: Int, _ txn: LMDBTransaction) throws -> [RowID] {
        guard let slots = layout.slots[source.entity], slot >= 0, slot < slots.count else {
            throw StoreError(.invalidRequest, "row \(source) has no slot \(slot)", store: storeName)
        }
        switch slots[slot] {
        case .reverse(let inverse, let order):
            let members = try duplicates(databases.refs, Keys.relationship(inverse, source), txn)
            try checkMembers(members, of: source, slot: slot)
            return try ordered(members, order, source, txn)
        case .links(let rel, _, let order):
            let members = try duplicates(databases.links, Keys.relationship(rel, source), txn)
            try checkMembers(members, of: source, slot: slot)
            return try ordered(members, order, source, txn)
        case .toOne, .attribute, .transient:
            if case .reference(let id) = try row(source, txn)?.values[slot] { return [id] }
            return []
        }
    }

    /// `members` in the stored order of `order` (members missing from the list follow in key order;
    /// listed rows that are no longer members are dropped).
    private func ordered(_ members: [RowID], _ order: UInt32?, _ source: RowID, _ txn: LMDBTransaction) throws
        -> [RowID]
    {
        guard let order, members.count > 1, let raw = try txn.get(databases.orders, Keys.relationship(order, source))
        else {
            return members
        }
        var listed: [RowID] = []
        do {
            var reader = ByteReader(raw)
            let count = Int(try reader.littleEndian(UInt32.self))
            guard count * 12 == reader.remaining else {
                throw FormatError("an order list of \(count) rows has \(reader.remaining) bytes")
            }
            listed.reserveCapacity(count)
            for _ in 0..<count { listed.append(try Keys.rowID(&reader)) }
        } catch {
            throw StoreError(
                .corrupt, "the order list of row \(source) is malformed (\(error)); restore the store from a backup",
                store: storeName)
        }
        let memberSet = Set(members)
        var seen = Set<RowID>()
        var result = listed.filter { memberSet.contains($0) && seen.insert($0).inserted }
        result += members.filter { !seen.contains($0) }
        return result
    }
}
