import Foundation
import Testing

@Suite("strata --help")
struct HelpTests {
    @Test(
        "every command's help shows an example",
        arguments: [
            ["convert"], ["inspect"], ["query"], ["export"], ["import"], ["validate"], ["model"], ["model", "show"],
            ["model", "diff"], ["codegen"], ["demo"], ["migrate"],
        ])
    func examples(_ command: [String]) throws {
        let result = try runStrata(command + ["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("Example:"))
        #expect(result.stdout.contains("strata \(command.joined(separator: " "))"))
    }

    @Test("the top-level help matches its snapshot")
    func snapshot() throws {
        let result = try runStrata(["--help"])
        #expect(result.status == 0)
        #expect(result.stdout == HelpTests.expected, "got:\n\(result.stdout)")
    }

    static let expected = """
        OVERVIEW: Core Data's object-graph persistence for Linux: stores, models and tools.

        Stores are written sqlite:PATH, xml:PATH, lmdb:PATH or memory:; a bare path picks the driver by its
        extension (.sqlite .sqlite3 .db .storedata, .xml, .lmdb or a directory).

        Exit status: 0 success, 1 runtime failure, 2 differences or problems found (convert, validate), 64
        usage error.

        Example:
          strata inspect app.sqlite

        USAGE: strata <subcommand>

        OPTIONS:
          -h, --help              Show help information.

        SUBCOMMANDS:
          convert                 Copy every object of a store to another driver, keeping primary keys,
                                  then verify the copy.
          inspect                 Show a store's driver, UUID, model hash, entities with counts,
                                  relationships and files.
          query                   Fetch objects with a predicate and sort keys; relationships print as
                                  object URIs.
          export                  Write a store's objects as JSON (the interchange format of
                                  docs/formats/json.md).
          import                  Read a JSON interchange file into a store, after checking all of it.
          validate                Check a store's integrity against its model; exits 0 only when clean.
          migrate                 Migrate a store to a new version of its model, inferring the mapping or
                                  using an Xcode mapping model.
          model                   Show a model or compare two.
          codegen                 Generate a typed ManagedObject subclass per entity, with fetch helpers.
          demo                    Build a small model, save a graph, fetch it with predicates and sorts,
                                  and print what happened.
          bench                   Time the standard workloads (insert, fetch, lookups, filtered fetch,
                                  update, delete, graph walk, small saves) on Strata's drivers.

          See 'strata help <subcommand>' for detailed help.

        """
}
