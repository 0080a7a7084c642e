import Foundation
import Strata
import StrataTesting
import StrataTools
import Testing

@Suite("Store locations")
struct StoreLocationTests {
    @Test("schemes name their driver and keep the path")
    func schemes() throws {
        let sqlite = try StoreLocation(parsing: "sqlite:/tmp/a.db")
        #expect(sqlite.scheme == .sqlite)
        #expect(sqlite.url?.path == "/tmp/a.db")
        #expect(try StoreLocation(parsing: "xml:/tmp/a.data").scheme == .xml)
        #expect(try StoreLocation(parsing: "LMDB:/tmp/a").scheme == .lmdb)
        let memory = try StoreLocation(parsing: "memory:")
        #expect(memory.scheme == .memory && memory.url == nil)
        #expect(try StoreLocation(parsing: "memory:cache").url?.absoluteString == "memory:cache")
    }

    @Test("a bare path picks the driver by extension, and a directory is LMDB")
    func extensions() throws {
        let directory = try TemporaryDirectory()
        for (name, scheme) in [
            ("a.sqlite", KnownDriver.sqlite), ("a.sqlite3", .sqlite), ("a.db", .sqlite),
            ("a.storedata", .sqlite),
            ("a.xml", .xml), ("a.lmdb", .lmdb),
        ] {
            #expect(try StoreLocation(parsing: directory.file(name).path).scheme == scheme, "\(name)")
        }
        #expect(try StoreLocation(parsing: directory.url.path).scheme == .lmdb)
    }

    @Test("a bare path with an unknown extension is a usage error that shows how to name the driver")
    func unknownExtension() throws {
        #expect {
            try StoreLocation(parsing: "/tmp/store.bin")
        } throws: { error in
            let error = error as? ToolError
            return error?.exitCode == 64 && error?.message.contains("sqlite:/tmp/store.bin") == true
        }
    }

    @Test("a file whose content contradicts its extension is a clear error, not a driver failure")
    func wrongGuess() throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("data.xml")
        try Data("SQLite format 3\u{0}rest".utf8).write(to: file)
        #expect {
            try StoreLocation(parsing: file.path)
        } throws: { error in
            (error as? ToolError)?.message.contains("holds SQLite data") == true
        }
        let sniffed = directory.file("store.bin")
        try Data("<?xml version=\"1.0\"?><database/>".utf8).write(to: sniffed)
        #expect(try StoreLocation(parsing: sniffed.path).scheme == .xml)
    }

    @Test("an unknown scheme is a usage error naming it")
    func unknownScheme() throws {
        #expect {
            try StoreLocation(parsing: "mysql:db")
        } throws: { error in
            (error as? ToolError)?.exitCode == 64 && "\(error)".contains("unknown store type 'mysql'")
        }
    }

    @Test("every scheme resolves to its registered driver or says the driver is not in this build")
    func availability() throws {
        let registered = Set(KnownDriver.fileBacked)
        for scheme in KnownDriver.allCases {
            let location = StoreLocation(scheme: scheme, url: scheme == .memory ? nil : URL(fileURLWithPath: "/tmp/x"))
            if scheme == .memory || scheme == .postgres || registered.contains(scheme) {
                #expect(try location.storeType().name == scheme.driverName)
            } else {
                #expect {
                    try location.storeType()
                } throws: { error in
                    (error as? ToolError)?.exitCode == 64 && "\(error)".contains("not available in this build")
                }
            }
        }
    }
}
