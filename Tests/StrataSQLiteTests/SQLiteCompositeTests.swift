import Foundation
import Strata
import StrataSQLite
import StrataTesting
import Testing

/// Composite attributes in a SQLite store: one column per leaf element, named as Core Data names
/// them (INFERRED, docs/formats/sqlite.md), and element key paths pushed down to SQL.
@Suite("SQLite composite attributes")
struct SQLiteCompositeTests {
    static func seededStore() throws -> (TemporaryDirectory, PersistentStoreCoordinator, PersistentStore, String) {
        let directory = try TemporaryDirectory(prefix: "sqlite-composite")
        let (coordinator, store) = try DriverHarness.sqlite.openStack(in: directory, model: CompositeModel.model)
        try CompositeModel.seed(ManagedObjectContext(coordinator: coordinator))
        return (directory, coordinator, store, directory.file("Conformance.sqlite").path)
    }

    @Test("each leaf element is a column named Z<ELEMENT>, uniqued like any column; the composite has none")
    func columns() throws {
        let (directory, _, _, path) = try Self.seededStore()
        defer { withExtendedLifetime(directory) {} }
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        func columns(_ table: String) throws -> [String: String] {
            Dictionary(
                uniqueKeysWithValues: try connection.rows("PRAGMA table_info(\(table))").map {
                    ($0[1].text ?? "", $0[2].text ?? "")
                })
        }
        let quake = try columns("ZQUAKE")
        #expect(
            quake == [
                "Z_PK": "INTEGER", "Z_ENT": "INTEGER", "Z_OPT": "INTEGER", "ZCODE": "VARCHAR", "ZDEPTH": "INTEGER",
                "ZRICHTER": "FLOAT", "ZDEPTH1": "FLOAT", "ZLATITUDE": "FLOAT", "ZLONGITUDE": "FLOAT",
                "ZCITY": "VARCHAR",
                "ZCOUNTRY": "VARCHAR", "ZSTATION": "INTEGER",
            ])
        #expect(
            try columns("ZSTATION").keys.sorted() == [
                "ZCITY", "ZCOUNTRY", "ZLATITUDE", "ZLONGITUDE", "ZNAME", "Z_ENT", "Z_OPT", "Z_PK",
            ])
        let a = try connection.rows("SELECT ZDEPTH, ZDEPTH1, ZRICHTER, ZCITY FROM ZQUAKE WHERE ZCODE = 'a'")
        #expect(
            a == [[.integer(10), .real(10.5), .real(6.1), .text("Tokyo")]], "the attribute and the element keep apart")
        let d = try connection.rows("SELECT ZRICHTER, ZLATITUDE, ZCITY FROM ZQUAKE WHERE ZCODE = 'd'")
        #expect(d == [[.null, .null, .null]], "an absent composite is NULL in every column")
    }

    @Test("predicates and sort keys on element key paths run in SQL, through to-one and to-many steps")
    func pushdown() throws {
        let (directory, coordinator, store, _) = try Self.seededStore()
        defer { withExtendedLifetime(directory) {} }
        let model = coordinator.managedObjectModel
        let quake = try #require(model.entity(named: "Quake"))
        let station = try #require(model.entity(named: "Station"))
        for (entity, format, count) in [
            (quake, "magnitude.richter > 4.5", 2), (quake, "location.place.city ==[c] 'lima'", 2),
            (quake, "station.location.latitude > 0", 2), (quake, "location.latitude BETWEEN {0, 40}", 3),
            (station, "ANY quakes.magnitude.richter > 7", 1),
        ] {
            var fetch = StoreFetch(entity: entity)
            fetch.predicate = try FetchPredicate(format: format)
            fetch.sort = [SortKey(entity === quake ? "magnitude.richter" : "location.latitude", ascending: false)]
            let result = try store.driver.fetch(fetch)
            #expect(result.appliedPredicate, "\(format) runs in SQL")
            #expect(result.appliedSort, "the sort runs in SQL")
            #expect(result.rows.count == count, "\(format)")
        }
    }

    @Test("a store laid out as Core Data lays out composites opens with the model and reads its values")
    func coreDataLayout() throws {
        let (directory, coordinator, store, path) = try Self.seededStore()
        defer { withExtendedLifetime(directory) {} }
        try coordinator.remove(store)
        // Change values behind Strata's back, in the columns Core Data would use.
        let connection = try SQLiteConnection(path: path, mode: .readWrite)
        try connection.execute("UPDATE ZQUAKE SET ZLATITUDE = 1.5, ZCOUNTRY = 'XX', ZDEPTH1 = 99 WHERE ZCODE = 'c'")
        connection.close()
        let (again, _) = try DriverHarness.sqlite.openStack(in: directory, model: CompositeModel.model)
        let context = ManagedObjectContext(coordinator: again)
        let c = try #require(
            try context.fetch(
                FetchRequest(entityName: "Quake", predicate: try FetchPredicate(format: "code == 'c'"))
            ).first)
        let location = try #require(c.value(forKey: "location") as? [String: Any])
        #expect(location["latitude"] as? Double == 1.5)
        #expect((location["place"] as? [String: Any])?["country"] as? String == "XX")
        #expect(c.value(forKey: "magnitude.depth") as? Float == 99)
    }
}
