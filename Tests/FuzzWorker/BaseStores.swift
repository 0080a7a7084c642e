import Foundation
import Strata
import StrataTesting

/// Valid stores the damaged-store targets start from.
enum BaseStores {
    /// The UUID every Strata-written base store gets, so the bytes of a base store, and thus a
    /// case's damage, are the same on every run.
    static let uuid = "5F0A2D3C-0000-4000-8000-00000000F022"

    /// Writes a store of the conformance model at `url` with the conformance seed plus rows with
    /// extreme values, and closes it.
    static func make(_ type: StoreType, at url: URL) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try coordinator.addPersistentStore(type: type, at: url)
        var metadata = store.metadata
        metadata.uuid = uuid
        try store.setMetadata(metadata)
        let context = ManagedObjectContext(coordinator: coordinator)
        try ConformanceModel.seed(context)
        let extremes: [(Int16, Int32, Int64, Double)] = [
            (.max, .max, .max, .greatestFiniteMagnitude), (.min, .min, .min, -.greatestFiniteMagnitude),
            (0, 0, 0, 0), (-1, -1, -1, .leastNonzeroMagnitude),
        ]
        for (index, (a, b, c, d)) in extremes.enumerated() {
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setConvertedValue(a, forKey: "int16")
            try item.setConvertedValue(b, forKey: "int32")
            try item.setConvertedValue(c, forKey: "int64")
            try item.setConvertedValue(d, forKey: "double")
            try item.setConvertedValue(String(repeating: "ü", count: index * 300), forKey: "string")
            try item.setConvertedValue(Data(repeating: UInt8(index), count: index * 1_000), forKey: "binary")
            try item.setConvertedValue(
                Date(timeIntervalSinceReferenceDate: [-1e10, 1e10, 0, -0.5][index]), forKey: "date")
        }
        try context.save()
        try coordinator.remove(store)
    }

    /// The store files of `url` for `type` (SQLite's journal files, LMDB's lock file), existing ones.
    static func files(of url: URL) -> [URL] {
        let candidates = [url] + ["-wal", "-shm", "-journal", "-lock"].map { URL(fileURLWithPath: url.path + $0) }
        return candidates.filter { FileManager.default.fileExists(atPath: $0.path) }
    }

    /// Copies the store at `from` (and its side files) to `to`, replacing what is there.
    static func copy(_ from: URL, to: URL) throws {
        remove(to)
        for file in files(of: from) where !file.path.hasSuffix("-lock") {
            let suffix = String(file.path.dropFirst(from.path.count))
            try FileManager.default.copyItem(at: file, to: URL(fileURLWithPath: to.path + suffix))
        }
    }

    /// Removes a store's files.
    static func remove(_ url: URL) {
        for file in files(of: url) {
            try? FileManager.default.removeItem(at: file)  // a leftover scratch file changes no outcome
        }
    }
}
