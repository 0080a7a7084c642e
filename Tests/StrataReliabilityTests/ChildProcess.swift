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
        try run(executable, arguments) { pid in
            for _ in 0..<(seconds * 100) where StrataTesting.ChildProcess.isRunning(pid) {
                if FileManager.default.fileExists(atPath: marker.path) {
                    kill(pid, SIGKILL)
                    return
                }
                usleep(10_000)
            }
        }
    }

    /// Starts `executable`, kills it with SIGKILL after `delay` microseconds (never, when `nil`),
    /// and returns what it printed.
    static func run(_ executable: URL, _ arguments: [String], killAfter delay: UInt32?) throws -> Outcome {
        try run(executable, arguments) { pid in
            if let delay {
                usleep(delay)
                kill(pid, SIGKILL)
            }
        }
    }

    /// Starts `executable` (through `posix_spawn`, reaped with `waitpid`: see
    /// `StrataTesting.ChildProcess`), runs `meanwhile` with its pid, waits for it to end and
    /// returns what it printed.
    private static func run(_ executable: URL, _ arguments: [String], meanwhile: (pid_t) -> Void) throws -> Outcome {
        let run = try StrataTesting.ChildProcess.capture([executable.path] + arguments, meanwhile: meanwhile)
        let text = String(decoding: run.output, as: UTF8.self)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.removeLast()  // the text after the last newline: empty, or a line cut by the kill
        return Outcome(
            lines: lines, errors: String(decoding: run.errors, as: UTF8.self),
            killed: run.termination.signal != nil, status: run.termination.status)
    }
}
