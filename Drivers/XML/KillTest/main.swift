// Saves to an XML store in a loop until killed; the XML driver's crash-safety test runs it.
//
// Usage: strata-xml-killtest <store path>
//
// Each save n sets Counter.value to n, inserts Item n and deletes Item n-50, then prints
// "saved n" (unbuffered). A file written by this loop always holds one Counter whose value n equals
// the largest Item index, with Items n-49...n (those above 0).
import Foundation
import Strata
import StrataXML

let model: ManagedObjectModel = {
    let counter = EntityDescription(
        "Counter",
        properties: [.attribute("value", .integer64), .toMany("items", "Item", inverse: "counter", deleteRule: .cascade)])
    let item = EntityDescription(
        "Item",
        properties: [
            .attribute("index", .integer64), .attribute("payload", .string),
            .toOne("counter", "Counter", inverse: "items"),
        ])
    return try! ManagedObjectModel(entities: [counter, item])  // a fixed, valid model
}()

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: strata-xml-killtest <store path>\n".utf8))
    exit(2)
}
do {
    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
    try coordinator.addPersistentStore(
        type: .xml, at: URL(fileURLWithPath: CommandLine.arguments[1]), options: StoreOptions(timeout: 10))
    let context = ManagedObjectContext(coordinator: coordinator)
    let counter = try context.fetch(FetchRequest(entityName: "Counter")).first
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
        FileHandle.standardOutput.write(Data("saved \(value)\n".utf8))  // unbuffered: the line is out once written
    }
} catch {
    FileHandle.standardError.write(Data("strata-xml-killtest: \(error)\n".utf8))
    exit(1)
}
