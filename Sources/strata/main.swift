import ArgumentParser
import Foundation
import StrataTools

// Top-level entry (not @main): the module has more files than main.swift, so main.swift is top-level code.
StrataCommand.main()

struct StrataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Core Data's object-graph persistence for Linux: stores, models and tools.",
        subcommands: [DemoCommand.self, BenchCommand.self])
}

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Build a small model, save a graph, fetch it with predicates and sorts, and print what happened.",
        discussion: "Example:\n  strata demo")

    func run() throws {
        do {
            for line in try Demo.run() { print(line) }
        } catch {
            FileHandle.standardError.write(Data("strata demo: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
