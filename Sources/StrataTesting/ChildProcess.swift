import Foundation

#if os(Linux)
    import Glibc
#else
    import Darwin
#endif

/// Child processes through `posix_spawn` and `waitpid`, for tests that run programs: Foundation's
/// `Process` waits for its children on a run loop that the test runner's busy threads may never
/// turn (a CI run hung for 20 minutes in `waitUntilExit` on a killed child left unreaped, while
/// Swift Testing's exit-test monitor spun on that zombie), and `pg_ctl start` leaves a daemon
/// holding its output. Every test that runs a program goes through here.
///
/// Thread safety: stateless; each call owns its child.
public enum ChildProcess {
    /// Starts `arguments` (the program's path first) with standard input from /dev/null and
    /// standard output and error to the file descriptor `output` (or /dev/null), in `directory`.
    public static func start(_ arguments: [String], output: Int32? = nil, directory: String = "/") throws -> pid_t {
        try start(arguments, output: output, directory: directory, environment: nil)
    }

    /// Starts `arguments` with `environment` added to this process's environment.
    public static func start(
        _ arguments: [String], output: Int32?, directory: String = "/", environment: [String: String]?
    ) throws -> pid_t {
        try start(arguments, output: output, error: output, directory: directory, environment: environment)
    }

    /// Starts `arguments` with standard output to `output` and standard error to `error` (each
    /// /dev/null when `nil`), in `directory`, with `environment` added to this process's.
    public static func start(
        _ arguments: [String], output: Int32?, error: Int32?, directory: String = "/", environment: [String: String]?
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }

        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        for (descriptor, target) in [(output, Int32(1)), (error, Int32(2))] {
            if let descriptor {
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            } else {
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            }
        }
        // Through the shell's `cd`: the server's user may not be allowed into this process's working
        // directory (posix_spawn_file_actions_addchdir_np is not in Swift's Glibc module).
        let line = ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", directory] + arguments
        let argv = line.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        var variables = ProcessInfo.processInfo.environment
        for (key, value) in environment ?? [:] { variables[key] = value }
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        let status = posix_spawn(&pid, line[0], &actions, nil, argv, envp)
        guard status == 0 else {
            throw PostgreSQLTestServer.Failure(message: "cannot start \(arguments[0]) (error \(status))")
        }
        return pid
    }

    /// Runs `arguments` to the end and returns its exit status (128 + n when killed by signal n).
    public static func run(_ arguments: [String], output: Int32? = nil, environment: [String: String]? = nil) throws
        -> Int32
    {
        let pid = try start(arguments, output: output, environment: environment)
        return try wait(pid)
    }

    /// Waits for a child started with ``start(_:output:directory:)`` and returns its exit status.
    public static func wait(_ pid: pid_t) throws -> Int32 {
        let end = try termination(of: pid)
        return end.signal.map { 128 + $0 } ?? end.status
    }

    /// How a child ended: the signal that killed it, or its exit status.
    public struct Termination: Sendable, Equatable {
        /// The signal that ended the child, `nil` when it exited by itself.
        public var signal: Int32?
        /// The exit status, or the signal's number when a signal ended it (as Foundation's
        /// `terminationStatus`).
        public var status: Int32
        /// Whether the child exited by itself with status 0.
        public var succeeded: Bool { signal == nil && status == 0 }

        public init(signal: Int32?, status: Int32) {
            self.signal = signal
            self.status = status
        }
    }

    /// Waits for a child started with ``start(_:output:error:directory:environment:)`` and says how
    /// it ended. The child is reaped here, never by Foundation's `Process` (see the type's note).
    public static func termination(of pid: pid_t) throws -> Termination {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw PostgreSQLTestServer.Failure(message: "waitpid failed (errno \(errno))") }
        }
        let signal = status & 0x7f
        return signal == 0
            ? Termination(signal: nil, status: (status >> 8) & 0xff) : Termination(signal: signal, status: signal)
    }

    /// Whether a child started here has not ended yet (an ended child that is not reaped yet is
    /// ended): read from /proc without reaping it. No /proc entry means the child was reaped, so
    /// it has ended: the read's error carries nothing else.
    public static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),  // none: reaped
            let close = stat.lastIndex(of: ")")
        else { return false }
        // The state follows the command name, which is in parentheses and may contain spaces.
        let state = stat[stat.index(after: close)...].drop { $0 == " " }.first
        return state != "Z" && state != "X"
    }

    /// Starts `arguments` with standard output and standard error to files, runs `meanwhile` with
    /// the child's pid, waits for the child and returns what it printed and how it ended.
    public static func capture(
        _ arguments: [String], directory: String = FileManager.default.currentDirectoryPath,
        environment: [String: String]? = nil, meanwhile: (pid_t) -> Void = { _ in }
    ) throws -> (output: Data, errors: Data, termination: Termination) {
        try capture(arguments, directory: directory, environment: environment, watching: { pid, _ in meanwhile(pid) })
    }

    /// ``capture(_:directory:environment:meanwhile:)`` whose `watching` also gets the path of the
    /// file the child's standard output goes to, to watch what it prints while it runs.
    public static func capture(
        _ arguments: [String], directory: String = FileManager.default.currentDirectoryPath,
        environment: [String: String]? = nil, watching: (pid_t, String) -> Void
    ) throws -> (output: Data, errors: Data, termination: Termination) {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString)")
        let outputPath = base.path + ".out"
        let errorPath = base.path + ".err"
        defer {
            unlink(outputPath)  // scratch files: a failed unlink changes no result
            unlink(errorPath)
        }
        let output = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let errors = open(errorPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer {
            if output >= 0 { close(output) }
            if errors >= 0 { close(errors) }
        }
        guard output >= 0, errors >= 0 else {
            throw PostgreSQLTestServer.Failure(message: "cannot create \(base.path).out/.err (errno \(errno))")
        }
        let pid = try start(arguments, output: output, error: errors, directory: directory, environment: environment)
        watching(pid, outputPath)
        let end = try termination(of: pid)
        return (
            FileManager.default.contents(atPath: outputPath) ?? Data(),
            FileManager.default.contents(atPath: errorPath) ?? Data(), end
        )
    }
}
