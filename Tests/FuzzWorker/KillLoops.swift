import Foundation
import Strata
import StrataTools

/// The loops the kill tests kill. Each works on the store at a path with any file driver and prints
/// one line (unbuffered) after each step is committed, so the parent knows what the store must
/// hold at least; the step after the last printed line may or may not have reached the disk.
///
/// - `save-loop`: save n sets `Ledger.round` to n, inserts three `Entry` rows of round n linked to
///   the ledger (and to the entries of the round before, many-to-many), and deletes the entries of
///   round n - 10; then prints `saved n`. A store this loop wrote holds one ledger whose round r
///   equals its largest entry round, with exactly three entries for each round of
///   max(1, r - 9)...r, every link in place.
/// - `key-loop`: inserts objects, obtains their permanent IDs without saving, prints
///   `keys ENTITY k1 k2 …`, forgets them, and repeats. Keys printed were handed out, so no later
///   allocation, in this process or after a reopen, may hand them out again.
/// - `metadata-loop`: sets metadata n (`fuzzRound` n, `fuzzData` of a size and content that
///   depend on n, `fuzzCheck` naming both) and prints `metadata n`. The store's metadata is always
///   one whole version: its three keys agree.
enum KillLoops {
    static let model: ManagedObjectModel = {
        let ledger = EntityDescription(
            "Ledger",
            properties: [
                .attribute("round", .integer64, isOptional: false), .attribute("note", .string),
                .toMany("entries", "Entry", inverse: "ledger", deleteRule: .cascade),
            ])
        let entry = EntityDescription(
            "Entry",
            properties: [
                .attribute("round", .integer64, isOptional: false), .attribute("index", .integer16, isOptional: false),
                .attribute("payload", .binaryData), .toOne("ledger", "Ledger", inverse: "entries"),
                .toMany("previous", "Entry", inverse: "next"), .toMany("next", "Entry", inverse: "previous"),
            ])
        // A fixed, valid model: building it cannot fail.
        return try! ManagedObjectModel(entities: [ledger, entry])
    }()

    static func run(_ loop: String, driver: String, path: URL) throws {
        guard let type = StoreType.named(KnownDriver(rawValue: driver)?.driverName ?? driver) else {
            throw CaseFailure("unknown driver '\(driver)'")
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: type, at: path, options: StoreOptions(timeout: 10))
        switch loop {
        case "save-loop": try saveLoop(coordinator)
        case "key-loop": try keyLoop(coordinator)
        default: try metadataLoop(coordinator, store)
        }
    }

    static func emit(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

    static func saveLoop(_ coordinator: PersistentStoreCoordinator) throws {
        let context = ManagedObjectContext(coordinator: coordinator)
        let ledger =
            try context.fetch(FetchRequest(entityName: "Ledger")).first
            ?? {
                let ledger = try context.insertNewObject(forEntityName: "Ledger")
                try ledger.setConvertedValue(0, forKey: "round")
                return ledger
            }()
        var round = ledger.value(forKey: "round", as: Int64.self) ?? 0
        var previous = try context.fetch(
            FetchRequest(entityName: "Entry", predicate: try FetchPredicate(format: "round == %@", round)))
        while true {
            round += 1
            try ledger.setConvertedValue(round, forKey: "round")
            try ledger.setConvertedValue("round \(round)", forKey: "note")
            var entries: [ManagedObject] = []
            for index in 0..<3 {
                let entry = try context.insertNewObject(forEntityName: "Entry")
                try entry.setConvertedValue(round, forKey: "round")
                try entry.setConvertedValue(Int16(index), forKey: "index")
                try entry.setConvertedValue(
                    Data(repeating: UInt8(truncatingIfNeeded: round), count: 100 + Int(round % 50) * 40),
                    forKey: "payload")
                try entry.setConvertedValue(ledger, forKey: "ledger")
                try entry.setConvertedValue(Set(previous), forKey: "previous")
                entries.append(entry)
            }
            for old in try context.fetch(
                FetchRequest(entityName: "Entry", predicate: try FetchPredicate(format: "round == %@", round - 10)))
            {
                context.delete(old)
            }
            try context.save()
            emit("saved \(round)")
            previous = entries
        }
    }

    static func keyLoop(_ coordinator: PersistentStoreCoordinator) throws {
        while true {
            let context = ManagedObjectContext(coordinator: coordinator)
            for entity in ["Ledger", "Entry"] {
                var objects: [ManagedObject] = []
                for _ in 0..<Int.random(in: 1...40) {
                    objects.append(try context.insertNewObject(forEntityName: entity))
                }
                try context.obtainPermanentIDs(for: objects)
                emit("keys \(entity) " + objects.map { "\($0.objectID.primaryKey)" }.joined(separator: " "))
            }
        }
    }

    /// The metadata of version `round`.
    static func metadataValues(_ round: Int64) -> [String: MetadataValue] {
        let size = Int(round % 97) * 300
        let data = Data((0..<size).map { UInt8(truncatingIfNeeded: Int64($0) &* 31 &+ round) })
        return [
            "fuzzRound": .integer(round), "fuzzData": .data(data),
            "fuzzCheck": .string("round \(round), \(size) bytes"),
        ]
    }

    static func metadataLoop(_ coordinator: PersistentStoreCoordinator, _ store: PersistentStore) throws {
        var round =
            store.metadata.values["fuzzRound"].flatMap { value -> Int64? in
                if case .integer(let n) = value { return n }
                return nil
            } ?? 0
        while true {
            round += 1
            var metadata = store.metadata
            for (key, value) in metadataValues(round) { metadata.values[key] = value }
            try coordinator.setMetadata(metadata, for: store)
            emit("metadata \(round)")
        }
    }
}
