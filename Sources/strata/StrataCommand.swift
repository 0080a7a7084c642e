import ArgumentParser
import Foundation
import StrataTools

@main
struct StrataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Core Data's object-graph persistence for Linux: stores, models and tools.",
        discussion: """
            Stores are written sqlite:PATH, xml:PATH, lmdb:PATH or memory:; a bare path picks the driver by \
            its extension (.sqlite .sqlite3 .db .storedata, .xml, .lmdb or a directory).

            Exit status: 0 success, 1 runtime failure, 2 differences or problems found (convert, validate), \
            64 usage error.

            Example:
              strata inspect app.sqlite
            """,
        subcommands: [
            ConvertCommand.self, InspectCommand.self, QueryCommand.self, ExportCommand.self, ImportCommand.self,
            ValidateCommand.self, MigrateCommand.self, ModelCommand.self, CodegenCommand.self, DemoCommand.self,
            BenchCommand.self,
        ])
}

/// Runs a command body, turning library errors into one line on standard error and the exit
/// status their kind calls for (64 usage, 1 failure, 2 differences).
func runTool(_ command: String, _ body: () throws -> Void) throws {
    do {
        try body()
    } catch let exit as ExitCode {
        throw exit
    } catch {
        let failure = ToolError.wrapping(error)
        printError("strata \(command): \(failure.message)")
        throw ExitCode(failure.exitCode)
    }
}

/// Writes a line to standard error.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Whether standard error is a terminal (for progress bars).
var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

/// Shared `--model` option.
struct ModelOption: ParsableArguments {
    @Option(
        name: .long,
        help: "The model (.xcdatamodeld, .xcdatamodel, contents or Strata model .json), for stores without their own.")
    var model: String?
}

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Build a small model, save a graph, fetch it with predicates and sorts, and print what happened.",
        discussion: """
            Runs the same graph on every driver (in-memory, SQLite, XML, LMDB), converts the SQLite store to \
            LMDB and then to XML with verification, and prints a small timing table.

            Example:
              strata demo
              strata demo --directory ./demo-stores
            """)

    @Option(help: "Keep the demo's stores in this directory (default: a temporary one, removed afterwards).")
    var directory: String?

    func validate() throws {
        if let directory, FileManager.default.fileExists(atPath: directory),
            !((try? FileManager.default.contentsOfDirectory(atPath: directory))?.isEmpty ?? false)
        {
            throw ValidationError("'\(directory)' is not an empty directory; name a new or empty one")
        }
    }

    func run() throws {
        try runTool("demo") {
            let folder: URL
            if let directory {
                folder = URL(fileURLWithPath: directory)
            } else {
                folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "strata-demo-\(UUID().uuidString)")
            }
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { if directory == nil { try? FileManager.default.removeItem(at: folder) } }
            for line in try DemoTour.run(in: folder) { print(line) }
            if directory != nil { print("\nThe stores are in \(folder.path).") }
        }
    }
}
