import Foundation
import Strata
import StrataTesting

/// A SQLite store of the conformance model holding `count` items (`int64` = 1…count, `string`
/// from `string`), saved through a context; for tests of the driver's fetch path.
func makeItemStore(
    in directory: TemporaryDirectory, named name: String, count: Int, string: (Int) -> String
) throws -> (PersistentStoreCoordinator, PersistentStore, URL) {
    let url = directory.file(name)
    let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
    let store = try coordinator.addPersistentStore(type: .sqlite, at: url)
    let context = ManagedObjectContext(coordinator: coordinator)
    for index in 1...count {
        let item = try context.insertNewObject(forEntityName: "Item")
        item["int64"] = index
        item["string"] = string(index)
    }
    try context.save()
    return (coordinator, store, url)
}
