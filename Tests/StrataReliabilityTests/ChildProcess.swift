import Foundation
import StrataTesting

/// Child processes for the kill tests: the worker's save loops and the `strata` tool.
enum ChildProcess {
    /// What a killed (or finished) child printed.
    struct Outcome {
        /// Complete lines of standard output (a line cut by the kill is left out).
        var lines: [String]
        /// Standard error.
        var errors: String
        /// Whether the child died of the signal (rather than exiting by itself first).
        var killed: Bool
        var status: Int32
    }

    /// An executable built beside the test bundle.
    static func executable(_ name: String) throws -> URL {
        let worker = try FuzzHarness.worker()
        let url = worker.deletingLastPathComponent().appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw CaseWorkerError(description: "\(name) is not built; run swift build --build-tests")
        }
        return url
    }

    /// Starts `executable`, kills it with SIGKILL as soon as a file exists at `marker` (which the
    /// child creates where it waits to be killed; checked every 10 ms, for at most `seconds`), and
    /// returns what it printed.
    static func run(_ executable: URL, _ arguments: [String], killWhenExists marker: URL, seconds: Int = 120) throws
        -> Outcome
    {
        try run(executable, arguments) { process in
            for _ in 0..<(seconds * 100) where process.isRunning {
                if FileManager.default.fileExists(atPath: marker.path) {
                    kill(process.processIdentifier, SIGKILL)
                    return
                }
                usleep(10_000)
            }
        }
    }

    /// Starts `executable`, kills it with SIGKILL after `delay` microseconds (never, when `nil`),
    /// and returns what it printed.
    static func run(_ executable: URL, _ arguments: [String], killAfter delay: UInt32?) throws -> Outcome {
        try run(executable, arguments) { process in
            if let delay {
                usleep(delay)
                kill(process.processIdentifier, SIGKILL)
            }
        }
    }

    /// Starts `executable`, runs `meanwhile` with it, waits for it to end and returns what it printed.
    private static func run(_ executable: URL, _ arguments: [String], meanwhile: (Process) -> Void) throws -> Outcome {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        // Both pipes are drained by threads so that a chatty child never blocks on a full pipe.
        let out = PipeReader(output)
        let err = PipeReader(errors)
        try process.run()
        meanwhile(process)
        process.waitUntilExit()
        let text = String(decoding: out.wait(), as: UTF8.self)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.removeLast()  // the text after the last newline: empty, or a line cut by the kill
        return Outcome(
            lines: lines, errors: String(decoding: err.wait(), as: UTF8.self),
            killed: process.terminationReason == .uncaughtSignal, status: process.terminationStatus)
    }
}

/// Reads a pipe to its end on a thread of its own.
final class PipeReader: @unchecked Sendable {
    // @unchecked Sendable: `data` is written once under `condition` and read after the signal.
    private let condition = NSCondition()
    private var data: Data?

    init(_ pipe: Pipe) {
        let handle = pipe.fileHandleForReading
        Thread { [self] in
            let all = handle.readDataToEndOfFile()
            condition.lock()
            data = all
            condition.signal()
            condition.unlock()
        }.start()
    }

    func wait() -> Data {
        condition.lock()
        defer { condition.unlock() }
        while data == nil { condition.wait() }
        return data ?? Data()
    }
}
