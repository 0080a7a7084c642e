import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs numbered test cases in a child process and reports each case that crashes it, hangs it or
/// fails, restarting the child after a crash or a hang at the next case. Use it for fuzzing code
/// that may trap on bad data: a trap kills the child, not the test run.
///
/// The child is an executable of yours. Started with `arguments(first, end)`, it runs cases
/// `first..<end` in order and prints, on standard output, one line when it starts a case and one
/// when it finishes it:
///
/// ```
/// begin 17 <what the case does, e.g. the damage it applies>
/// pass 17 <outcome, e.g. "opened" or "corrupt">
/// fail 17 <why the case failed, e.g. an error of the wrong type>
/// ```
///
/// Other lines are ignored. A case that prints `begin` and then no `pass` or `fail` before the
/// child dies is a crash (the last lines of the child's standard error, where the Swift runtime
/// prints the fatal error and a backtrace, are kept); one that takes longer than ``timeout`` is a
/// hang (the child is killed). The numbering must be deterministic, so that a case can be run
/// alone again from its number.
///
/// Not `Sendable`: make one per test.
public struct CaseWorker {
    /// The child executable.
    public var executable: URL
    /// The arguments that make the child run cases `first..<end`.
    public var arguments: (_ first: Int, _ end: Int) -> [String]
    /// Seconds one case may take before it counts as a hang.
    public var timeout: Double = 10
    /// Seconds the child may take to start its first case.
    public var startupTimeout: Double = 120
    /// Extra environment variables for the child.
    public var environment: [String: String] = [:]
    /// Crashes reported with a backtrace of the crashed thread (about 0.2 s each in a debug
    /// build); after that many the child runs without the backtracer and a crash keeps only the
    /// runtime's fatal-error line, when there is one.
    public var backtraces = 200

    /// A worker running `executable`.
    public init(executable: URL, arguments: @escaping (_ first: Int, _ end: Int) -> [String]) {
        self.executable = executable
        self.arguments = arguments
    }

    /// What happened to one case that did not pass.
    public struct Failure: CustomStringConvertible, Sendable {
        /// The case's number.
        public var index: Int
        /// `"crash"`, `"hang"` or `"fail"`.
        public var kind: String
        /// What the case did (its `begin` line).
        public var what: String
        /// The child's reason (`fail`), its exit status, or the end of its standard error.
        public var detail: String

        public var description: String { "case \(index) \(kind): \(what)\n\(detail)" }
    }

    /// What a run found.
    public struct Report: Sendable {
        /// Cases that passed.
        public var passed = 0
        /// Cases that did not pass, in order.
        public var failures: [Failure] = []
        /// How many passing cases gave each outcome (the first word after `pass N`).
        public var outcomes: [String: Int] = [:]
        /// Children started.
        public var starts = 0
        /// Cases run: passed plus failed.
        public var total: Int { passed + failures.count }
    }

    /// Runs `cases`, restarting the child after each crash or hang.
    ///
    /// - Throws: ``CaseWorkerError`` when the child cannot start, or exits or stalls before its first
    ///   case, so a broken worker is not mistaken for a clean run.
    public func run(cases: Range<Int>) throws -> Report {
        var report = Report()
        var next = cases.lowerBound
        while next < cases.upperBound {
            report.starts += 1
            let withBacktrace = report.failures.filter { $0.kind == "crash" }.count < backtraces
            next = try runChild(from: next, to: cases.upperBound, backtrace: withBacktrace, into: &report)
        }
        return report
    }

    /// Starts one child at `first`; returns the case to start the next child at.
    private func runChild(from first: Int, to end: Int, backtrace: Bool, into report: inout Report) throws -> Int {
        // Started with posix_spawn and reaped with waitpid (ChildProcess), not Foundation's Process,
        // whose reaping a busy test run can starve; standard output comes through a pipe read
        // line by line, standard error goes to a file.
        var additions = [
            "SWIFT_BACKTRACE": backtrace
                ? "enable=yes,interactive=no,color=no,threads=crashed,registers=none,images=none,limit=40" : "enable=no"
        ]
        for (key, value) in environment { additions[key] = value }
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "case-worker-\(UUID().uuidString).err")
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw CaseWorkerError("cannot create a pipe for the child (errno \(errno))") }
        // Not inherited by children other tests start meanwhile (the child's copy is made by dup2).
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        defer {
            close(ends[0])
            unlink(errorFile.path)  // a stray temporary file changes no result
        }
        let errorDescriptor = open(errorFile.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let pid: pid_t
        do {
            guard errorDescriptor >= 0 else {
                throw CaseWorkerError("cannot create \(errorFile.path) for the child's standard error")
            }
            pid = try ChildProcess.start(
                [executable.path] + arguments(first, end), output: ends[1], error: errorDescriptor,
                directory: FileManager.default.currentDirectoryPath, environment: additions)
            close(ends[1])
            close(errorDescriptor)
        } catch {
            close(ends[1])
            if errorDescriptor >= 0 { close(errorDescriptor) }
            throw CaseWorkerError("cannot start \(executable.path): \(error); build it with swift build --build-tests")
        }
        var lines = LineReader(descriptor: ends[0])
        var current: (index: Int, what: String)?
        var started = false
        var deadline = Date().addingTimeInterval(startupTimeout)
        var resume = end
        loop: while true {
            switch lines.next(until: deadline) {
            case .line(let line):
                let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
                guard parts.count >= 2, let index = Int(parts[1]) else { continue }
                let text = parts.count > 2 ? String(parts[2]) : ""
                switch parts[0] {
                case "begin":
                    started = true
                    current = (index, text)
                    deadline = Date().addingTimeInterval(timeout)
                case "pass":
                    report.passed += 1
                    report.outcomes[String(text.split(separator: " ").first ?? ""), default: 0] += 1
                    current = nil
                case "fail":
                    report.failures.append(Failure(index: index, kind: "fail", what: current?.what ?? "", detail: text))
                    current = nil
                default: continue
                }
            case .end:
                let ended = try ChildProcess.termination(of: pid)
                if let current {
                    let status =
                        ended.signal != nil
                        ? "killed by signal \(ended.status)" : "exited with status \(ended.status)"
                    report.failures.append(
                        Failure(
                            index: current.index, kind: "crash", what: current.what,
                            detail: status + "\n" + Self.tail(of: errorFile)))
                    resume = current.index + 1
                } else if !started || !ended.succeeded {
                    throw CaseWorkerError(
                        "\(executable.lastPathComponent) \(arguments(first, end).joined(separator: " ")) stopped outside a case "
                            + "(status \(ended.status)):\n\(Self.tail(of: errorFile))")
                }
                break loop
            case .timeout:
                kill(pid, SIGKILL)
                _ = try ChildProcess.termination(of: pid)
                guard let current else {
                    throw CaseWorkerError(
                        "\(executable.lastPathComponent) did not start a case within \(Int(startupTimeout)) s")
                }
                report.failures.append(
                    Failure(
                        index: current.index, kind: "hang", what: current.what,
                        detail: "no answer within \(timeout) s\n" + Self.tail(of: errorFile)))
                resume = current.index + 1
                break loop
            }
        }
        return resume
    }

    /// The last lines of the child's standard error.
    private static func tail(of file: URL, lines count: Int = 200) -> String {
        guard let data = FileManager.default.contents(atPath: file.path) else { return "" }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").suffix(count).joined(separator: "\n")
    }
}

/// A case worker that could not run at all.
public struct CaseWorkerError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public var description: String

    /// An error saying `description`.
    public init(description: String) { self.description = description }

    init(_ description: String) { self.description = description }
}

/// Reads lines from a pipe, waiting at most until a deadline for each.
private struct LineReader {
    enum Event {
        case line(String)
        case end
        case timeout
    }

    let descriptor: Int32
    var buffer: [UInt8] = []
    var finished = false

    init(descriptor: Int32) { self.descriptor = descriptor }

    mutating func next(until deadline: Date) -> Event {
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return .line(line)
            }
            if finished { return .end }
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return .timeout }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(remaining * 1_000, 60_000)) + 1)
            if ready < 0 {
                if errno == EINTR { continue }
                finished = true
                continue
            }
            if ready == 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                finished = true
                if !buffer.isEmpty { buffer.append(10) }
                continue
            }
            buffer.append(contentsOf: chunk[..<count])
        }
    }
}
