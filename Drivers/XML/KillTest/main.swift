// Works on an XML store until killed; the XML driver's crash-safety tests run it.
//
// Usage: strata-xml-killtest <store path> [save | allocate | save-once]
//
// save (the default): each save n sets Counter.value to n, inserts Item n and deletes Item n-50,
// then prints "saved n" (unbuffered). A file written by this loop always holds one Counter whose
// value n equals the largest Item index, with Items n-49...n (those above 0).
//
// allocate: inserts Items and gives them permanent IDs (obtainPermanentIDs) in rounds of 1, 3,
// 700, 1500 and 2 objects, printing "keys k1 k2 …" (unbuffered) after each round; every third
// round is saved. A key printed once must never be printed again, by this run or a later one.
//
// save-once: inserts one Counter, saves, and exits 0 (the store is created with the process's
// umask).
import Foundation
import Strata
import StrataXML

let model: ManagedObjectModel = {
    let counter = EntityDescription(
        "Counter",
        properties: [
            .attribute("value", .integer64), .toMany("items", "Item", inverse: "counter", deleteRule: .cascade),
        ])
    let item = EntityDescription(
        "Item",
        properties: [
            .attribute("index", .integer64), .attribute("payload", .string),
            .toOne("counter", "Counter", inverse: "items"),
        ])
    return try! ManagedObjectModel(entities: [counter, item])  // a fixed, valid model
}()

let arguments = CommandLine.arguments
guard arguments.count == 2 || arguments.count == 3,
    ["save", "allocate", "save-once"].contains(arguments.count == 3 ? arguments[2] : "save")
else {
    FileHandle.standardError.write(Data("usage: strata-xml-killtest <store path> [save | allocate | save-once]\n".utf8))
    exit(2)
}
let mode = arguments.count == 3 ? arguments[2] : "save"

func write(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))  // unbuffered: the line is out once written
}

do {
    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
    try coordinator.addPersistentStore(
        type: .xml, at: URL(fileURLWithPath: arguments[1]), options: StoreOptions(timeout: 10))
    let context = ManagedObjectContext(coordinator: coordinator)
    switch mode {
    case "save-once":
        let counter = try context.insertNewObject(forEntityName: "Counter")
        counter["value"] = 1
        try context.save()
    case "allocate":
        let sizes = [1, 3, 700, 1_500, 2]
        var round = 0
        while true {
            var objects: [ManagedObject] = []
            for index in 0..<sizes[round % sizes.count] {
                let item = try context.insertNewObject(forEntityName: "Item")
                item["index"] = index
                objects.append(item)
            }
            try context.obtainPermanentIDs(for: objects)
            write("keys " + objects.map { String($0.objectID.primaryKey) }.joined(separator: " "))
            if round % 3 == 2 { try context.save() }
            round += 1
        }
    default:
        let counter =
            try context.fetch(FetchRequest(entityName: "Counter")).first
            ?? context.insertNewObject(forEntityName: "Counter")
        var value = (counter.value(forKey: "value") as? Int) ?? 0
        while true {
            value += 1
            counter["value"] = value
            let item = try context.insertNewObject(forEntityName: "Item")
            item["index"] = value
            item["payload"] = String(repeating: "payload \(value) ", count: 20 + value % 40)
            item["counter"] = counter
            let old = try context.fetch(
                FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "index <= \(value - 50)")))
            for stale in old { context.delete(stale) }
            try context.save()
            write("saved \(value)")
        }
    }
} catch {
    FileHandle.standardError.write(Data("strata-xml-killtest: \(error)\n".utf8))
    exit(1)
}
