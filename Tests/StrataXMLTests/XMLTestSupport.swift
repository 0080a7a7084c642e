import Foundation
import Strata
import StrataTesting
import StrataXML
import Testing

/// Shared helpers of the XML driver tests.
enum XMLTestSupport {
    /// A store of the conformance model, seeded, saved and closed, at `directory/name`.
    static func seededStore(in directory: TemporaryDirectory, name: String = "seeded.xml") throws -> URL {
        let url = directory.file(name)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try coordinator.addPersistentStore(type: .xml, at: url)
        try ConformanceModel.seed(ManagedObjectContext(coordinator: coordinator))
        try coordinator.remove(store)
        return url
    }

    /// Opens a driver directly (no coordinator).
    static func driver(
        at url: URL, model: ManagedObjectModel = ConformanceModel.model, options: StoreOptions = StoreOptions()
    ) throws -> XMLDriver {
        let request = StoreOpenRequest(url: url, model: model, configuration: nil, options: options)
        return try #require(try XMLDriverFactory().makeDriver(request) as? XMLDriver)
    }

    /// Every row of the store, by ID.
    static func allRows(_ driver: some StoreDriver, model: ManagedObjectModel) throws -> [RowID: RowSnapshot] {
        var rows: [RowID: RowSnapshot] = [:]
        for entity in model.entities where entity.superentityName == nil {
            for row in try driver.fetch(StoreFetch(entity: entity)).rows { rows[row.id] = row }
        }
        return rows
    }

    /// The text of a file.
    static func text(_ url: URL) throws -> String { try String(contentsOf: url, encoding: .utf8) }

    /// Writes `text` to `directory/name`.
    static func write(_ text: String, in directory: TemporaryDirectory, name: String = "store.xml") throws -> URL {
        let url = directory.file(name)
        try Data(text.utf8).write(to: url)
        return url
    }

    /// Opens `url` with `model` and returns the StoreError it must throw.
    static func openError(_ url: URL, model: ManagedObjectModel = ConformanceModel.model) -> StoreError? {
        do {
            let driver = try driver(at: url, model: model, options: StoreOptions(isReadOnly: true))
            try driver.close()
            return nil
        } catch {
            return error as? StoreError
        }
    }

    /// A small Core Data XML file in Apple's layout (the reference's sample) over `body`.
    static func appleStyle(_ objects: String, nextObjectID: Int = 200) -> String {
        """
        <?xml version="1.0" standalone="yes"?>
        <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">

        <database>
            <databaseInfo>
                <version>134481920</version>
                <UUID>343C8D7F-A000-42C4-8463-43FA1E5EF3FB</UUID>
                <nextObjectID>\(nextObjectID)</nextObjectID>
                <metadata></metadata>
            </databaseInfo>
        \(objects)
        </database>

        """
    }
}

/// The code of the ``StoreError`` `body` throws; `nil` when it throws nothing or something else.
func storeErrorCode(_ body: () throws -> Void) -> StoreError.Code? {
    do {
        try body()
        return nil
    } catch {
        return (error as? StoreError)?.code
    }
}
