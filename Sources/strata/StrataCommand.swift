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
            ValidateCommand.self, ModelCommand.self, CodegenCommand.self, DemoCommand.self,
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
    @Option(name: .long, help: "The model (.xcdatamodeld, .xcdatamodel, contents or Strata model .json), for stores without their own.")
    var model: String?
}

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Build a small model, save a graph, fetch it with predicates and sorts, and print what happened.",
        discussion: "Example:\n  strata demo")

    func run() throws {
        try runTool("demo") {
            for line in try Demo.run() { print(line) }
        }
    }
}
