import Foundation

#if os(Linux)
    import Glibc
#else
    import Darwin
#endif

/// Child processes through `posix_spawn` and `waitpid`, for tests that run programs: Foundation's
/// `Process` waits for its children on a run loop that the test runner's busy threads may never
/// turn, and `pg_ctl start` leaves a daemon holding its output.
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
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }

        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let output {
            posix_spawn_file_actions_adddup2(&actions, output, 1)
            posix_spawn_file_actions_adddup2(&actions, output, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
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
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw PostgreSQLTestServer.Failure(message: "waitpid failed (errno \(errno))") }
        }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
