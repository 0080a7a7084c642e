import Foundation
import Strata
import StrataTesting
import StrataTools
import Testing

/// The driver table (``KnownDriver/allCases``) is the only list of drivers: every consumer finds
/// every entry in it, so a new entry is all a new driver needs.
@Suite("Driver table")
struct KnownDriverTests {
    @Test("each entry has a unique lower-case name and store type, and is found by each of its names")
    func namesAreUnique() throws {
        let drivers = KnownDriver.allCases
        #expect(Set(drivers.map(\.rawValue)).count == drivers.count)
        #expect(Set(drivers.map { $0.driverName.lowercased() }).count == drivers.count)
        for driver in drivers {
            #expect(driver.rawValue == driver.rawValue.lowercased() && !driver.rawValue.isEmpty)
            #expect(KnownDriver(rawValue: driver.rawValue.uppercased()) == driver)
            #expect(KnownDriver(driverName: driver.driverName) == driver)
            #expect(KnownDriver(anyName: driver.title) == driver)
            #expect(KnownDriver(anyName: driver.driverName) == driver)
        }
        // The names code uses for the built-in drivers are entries of the table.
        for builtIn in [KnownDriver.memory, .sqlite, .xml, .lmdb, .postgres] {
            #expect(drivers.contains(builtIn))
        }
        #expect(KnownDriver(rawValue: "oracle") == nil && KnownDriver(anyName: "oracle") == nil)
    }

    @Test("registering the table makes every store type findable by name")
    func registration() {
        KnownDriver.registerAll()
        for driver in KnownDriver.allCases {
            #expect(StoreType.named(driver.driverName) == driver.type, "\(driver)")
        }
    }

    @Test("no two drivers claim one file extension, and every extension and scheme parses to its driver")
    func locations() throws {
        let directory = try TemporaryDirectory()
        let extensions = KnownDriver.allCases.flatMap(\.fileExtensions)
        #expect(Set(extensions).count == extensions.count)
        for driver in KnownDriver.allCases {
            switch driver.storage {
            case .memory:
                #expect(try StoreLocation(parsing: "\(driver.rawValue):").scheme == driver)
            case .file(let extensions, _):
                #expect(!extensions.isEmpty, "\(driver) has no extension for new stores")
                #expect(try StoreLocation(parsing: "\(driver.rawValue):/tmp/a.data").scheme == driver)
                for name in extensions {
                    #expect(try StoreLocation(parsing: directory.file("a.\(name)").path).scheme == driver, "\(name)")
                }
            case .server(let schemes, let example):
                #expect(try StoreLocation(parsing: example).scheme == driver)
                for scheme in schemes {
                    #expect(try StoreLocation(parsing: "\(scheme)://user@127.0.0.1:5432/db").scheme == driver)
                }
            }
        }
        #expect(
            KnownDriver.fileBacked == KnownDriver.allCases.filter { StoreLocation(scheme: $0, url: nil).isFileBacked })
    }

    @Test("an unknown scheme's message lists every driver's way of writing a location")
    func unknownSchemeListsTable() throws {
        #expect {
            try StoreLocation(parsing: "mysql:db")
        } throws: { error in
            KnownDriver.allCases.allSatisfy { "\(error)".contains($0.locationExample) }
        }
    }

    @Test("a store file is recognised by content as its own driver's, whatever its name")
    func signatures() throws {
        let directory = try TemporaryDirectory()
        KnownDriver.registerAll()
        for driver in KnownDriver.fileBacked where driver != .lmdb {
            // Each file-backed driver with a signature writes a store under a neutral name; a
            // bare path to it is read as that driver's store.
            let url = directory.file("store-\(driver.rawValue).data")
            let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
            let store = try coordinator.addPersistentStore(type: driver.type, at: url)
            let context = ManagedObjectContext(coordinator: coordinator)
            try context.insertNewObject(forEntityName: "Tag")["name"] = "a tag"
            try context.save()
            try coordinator.remove(store)
            #expect(try StoreLocation(parsing: url.path).scheme == driver)
        }
    }

    @Test("the benchmarks, the bench command and the demo tour run on the table's drivers")
    func consumers() throws {
        let everyName = KnownDriver.allCases.map(\.rawValue).joined(separator: ",")
        #expect(try KnownDriver.parseList(everyName).get() == KnownDriver.allCases)
        #expect(try KnownDriver.parseList("in-memory, InMemory").get() == [.memory])
        #expect(DemoTour.drivers == KnownDriver.allCases.filter { !$0.isOnServer })
        for driver in KnownDriver.allCases {
            #expect((driver.fileName != nil) == driver.isFileBacked, "\(driver)")
            #expect(!driver.settings.isEmpty)
        }
    }

    @Test("a driver encodes as its name and an unknown name does not decode")
    func codable() throws {
        let data = try JSONEncoder().encode(KnownDriver.allCases)
        #expect(try JSONDecoder().decode([KnownDriver].self, from: data) == KnownDriver.allCases)
        #expect(String(decoding: data, as: UTF8.self).contains("\"lmdb\""))
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([KnownDriver].self, from: Data("[\"oracle\"]".utf8))
        }
    }
}
