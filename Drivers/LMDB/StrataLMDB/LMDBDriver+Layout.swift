import CLMDB
import Foundation
import Strata

extension LMDBDriver {
    /// Compares the layout the store was written with to this model's: entities under other numbers
    /// are a model mismatch (their rows would be misread); a different set of indexes is rebuilt
    /// (writable stores) or refused (read-only ones).
    func checkLayout(readOnly: Bool) throws {
        let stored = try environment.read { txn in
            try txn.get(databases.meta, Array("layout".utf8)).map { String(decoding: $0, as: UTF8.self) }
        }
        let current = layout.signature
        guard let stored, stored != current else { return }
        let (storedEntities, storedIndexes) = Self.parse(stored)
        let (currentEntities, currentIndexes) = Self.parse(current)
        let currentNumbers = Dictionary(currentEntities.map { ($0.value, $0.key) }) { a, _ in a }
        var differing: [String] = []
        for (number, name) in storedEntities where currentNumbers[name] != number { differing.append(name) }
        if !differing.isEmpty {
            throw StoreError(
                .modelMismatch,
                "the store was written with a different model; entities that differ: \(differing.sorted().joined(separator: ", ")). Open it with the model that wrote it, or migrate it",
                store: storeName)
        }
        guard storedIndexes != currentIndexes else {
            if !readOnly {
                try environment.write { txn in try txn.put(databases.meta, Array("layout".utf8), Array(current.utf8)) }
            }
            return
        }
        if readOnly {
            throw StoreError(
                .modelMismatch,
                "the store's indexes were built for another model version; open it writable once to rebuild them",
                store: storeName)
        }
        try rebuildIndexes()
    }

    /// Drops the index database and indexes every row again, in one write transaction.
    func rebuildIndexes() throws {
        try environment.write { txn in
            try txn.drop(databases.index)
            for (root, dbi) in databases.rows {
                _ = root
                try txn.withCursor(dbi) { cursor in
                    var entry = try cursor.move(MDB_FIRST)
                    while let current = entry {
                        let id = try rowID(current.key)
                        if let plan = layout.plans[id.entity] {
                            let row = try decode(current.value, id: id, plan: plan)
                            for index in layout.indexesByEntity[id.entity] ?? [] {
                                try txn.put(
                                    databases.index, Keys.index(index.id, index.slots.map { row.values[$0] }),
                                    Keys.row(id),
                                    flags: UInt32(MDB_NODUPDATA))
                            }
                        }
                        entry = try cursor.move(MDB_NEXT)
                    }
                }
            }
            try txn.put(databases.meta, Array("layout".utf8), Array(layout.signature.utf8))
        }
    }

    private static func parse(_ signature: String) -> (entities: [Int32: String], indexes: Set<String>) {
        var entities: [Int32: String] = [:]
        var indexes = Set<String>()
        for part in signature.split(separator: ";") {
            let pieces = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pieces.count == 2 else { continue }
            if pieces[0].hasPrefix("i") {
                indexes.insert(String(part))
            } else if let number = Int32(pieces[0]) {
                entities[number] = pieces[1]
            }
        }
        return (entities, indexes)
    }
}
