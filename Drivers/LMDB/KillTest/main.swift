// strata-lmdb-killtest: saves in a loop until killed, for the LMDB kill test.
//
// Usage: strata-lmdb-killtest <store path> [once]
//
// With `once`, it saves one round and exits 0 (a new store is created with the process's umask).
//
// Each round reads the Counter object (creating it), sets its value to n + 1 and inserts three
// Entry rows with round n + 1, all in one save; after the save returns it prints "n+1" on its own
// line and flushes. The parent kills it at a random moment and checks the store holds exactly a
// confirmed round (or the one after it) and never part of a round.
import Foundation
import Strata
import StrataLMDB

/// The kill test's model: a counter and the entries each round adds.
enum KillTestModel {
    static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription("Counter", properties: [.attribute("value", .integer64, isOptional: false)]),
            EntityDescription(
                "Entry", properties: [.attribute("round", .integer64, isOptional: false), .attribute("note", .string)]),
        ])
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 2 || (arguments.count == 3 && arguments[2] == "once") else {
    FileHandle.standardError.write(Data("usage: strata-lmdb-killtest <store path> [once]\n".utf8))
    exit(64)
}
let once = arguments.count == 3
do {
    let coordinator = PersistentStoreCoordinator(managedObjectModel: try KillTestModel.make())
    try coordinator.addPersistentStore(type: .lmdb, at: URL(fileURLWithPath: arguments[1]))
    let context = ManagedObjectContext(coordinator: coordinator)
    var counter = try context.fetch(FetchRequest(entityName: "Counter")).first
    if counter == nil {
        counter = try context.insertNewObject(forEntityName: "Counter")
        counter?["value"] = Int64(0)
        try context.save()
    }
    // Set just above when missing.
    let object = counter!
    while true {
        let next = Int64((object["value"] as? Int) ?? 0) + 1
        object["value"] = next
        for index in 0..<3 {
            let entry = try context.insertNewObject(forEntityName: "Entry")
            entry["round"] = next
            entry["note"] = String(repeating: "round \(next) entry \(index) ", count: 8)
        }
        try context.save()
        FileHandle.standardOutput.write(Data("\(next)\n".utf8))
        if once { exit(0) }
    }
} catch {
    FileHandle.standardError.write(Data("strata-lmdb-killtest: \(error)\n".utf8))
    exit(1)
}
