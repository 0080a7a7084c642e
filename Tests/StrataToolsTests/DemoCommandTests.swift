import Foundation
import Strata
import StrataTesting
import StrataTools
import Testing

@Suite("strata demo")
struct DemoCommandTests {
    @Test("the demo library call reports the fetch, validation, deny and cascade outcomes")
    func demoLibraryCall() throws {
        let lines = try Demo.run()
        #expect(lines.contains("  Grace (45)"))
        #expect(lines.contains("Research employs Ada, Grace, Ken (through the inverse relationship)."))
        #expect(lines.contains { $0.hasPrefix("Validation refused a save with 2 failures") })
        #expect(lines.contains { $0.hasPrefix("Deleting the project was denied") })
        #expect(lines.contains("Deleted Research; the cascade rule removed its employees: 3 employees remain."))
    }

    @Test("the built strata binary runs the demo on every driver, converts with verification and times it")
    func demoBinary() throws {
        let result = try runStrata(["demo"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("Strata demo on the SQLite driver"))
        #expect(result.stdout.contains("3 employees remain"))
        #expect(
            result.stdout.contains(
                "Ran the same steps on in-memory, SQLite, XML, LMDB: every driver gave the same results."))
        #expect(result.stdout.contains("sqlite → lmdb: 5 objects in 3 entities, verified"))
        #expect(result.stdout.contains("lmdb → xml: 5 objects in 3 entities, verified"))
        for driver in ["in-memory", "SQLite", "XML", "LMDB"] { #expect(result.stdout.contains("| \(driver) | ")) }
        #expect(result.stderr.isEmpty)
    }

    @Test("the demo keeps its stores in a new directory when asked, and refuses a non-empty one")
    func demoDirectory() throws {
        let directory = try TemporaryDirectory()
        let target = directory.file("stores")
        let kept = try runStrata(["demo", "--directory", target.path])
        #expect(kept.status == 0, "\(kept.stderr)")
        for name in ["demo.sqlite", "demo.xml", "demo.lmdb", "converted.lmdb", "converted.xml"] {
            #expect(FileManager.default.fileExists(atPath: target.appendingPathComponent(name).path), "\(name)")
        }
        let again = try runStrata(["demo", "--directory", target.path])
        #expect(again.status == 64)
        #expect(again.stderr.contains("not an empty directory"))
    }

    @Test("an unknown subcommand is a usage error with exit code 64")
    func unknownCommand() throws {
        let result = try runStrata(["frobnicate"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("frobnicate"))
    }

    @Test("help for demo shows an example")
    func help() throws {
        let result = try runStrata(["demo", "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("Example:"))
    }
}
