import Foundation
import Strata
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

    @Test("the built strata binary runs the demo, exits 0 and prints to stdout only")
    func demoBinary() throws {
        let result = try runStrata(["demo"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("Strata demo on the InMemory driver"))
        #expect(result.stdout.contains("3 employees remain"))
        #expect(result.stderr.isEmpty)
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
