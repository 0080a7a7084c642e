import Foundation

#if os(Linux)
    import Glibc
#else
    import Darwin
#endif

/// A throwaway PostgreSQL server for tests and benchmarks: `initdb` and `pg_ctl` in a temporary
/// directory, listening on a free loopback port, stopped and removed when the process exits (a
/// watchdog process removes it too if the process is killed).
///
/// The server programs are found in `STRATA_PG_BIN` when set, then on `PATH`, then where Debian
/// and Ubuntu put them (`/usr/lib/postgresql/<version>/bin`, newest first), then
/// `/usr/local/pgsql/bin`. PostgreSQL refuses to run as root, so when the process runs as root the
/// server runs as the system user `strata-pg` (created with `useradd --system` when missing, as
/// `scripts/setup.sh` does) through `runuser`; otherwise it runs as the current user.
///
/// The superuser is `strata`, trusted on loopback without a password; every other role must log
/// in with its password (`scram-sha-256`), for tests of credentials. The database is `postgres`:
/// tests use one schema each.
///
/// Thread safety: `Sendable`; its fields never change after start.
public final class PostgreSQLTestServer: Sendable {
    /// The loopback port the server listens on.
    public let port: Int
    /// The superuser's name.
    public let user = Programs.superuser
    private let programs: Programs

    /// The temporary directory holding the data directory, socket and log.
    public var directory: URL { programs.directory }
    /// Whether commits wait for the disk (`fsync` and `synchronous_commit` on).
    public var isDurable: Bool { programs.isDurable }
    /// The data directory.
    public var dataDirectory: URL { programs.dataDirectory }
    /// The server's log file.
    public var logFile: URL { programs.logFile }

    /// Failures to find or start the server, with what to do about them.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        public var message: String
        /// Creates a failure.
        public init(message: String) { self.message = message }
        public var description: String { message }
    }

    private static let sharedServer = SharedServer()

    /// The process's server (fsync off, for tests), started on first use and stopped at exit.
    ///
    /// - Throws: ``Failure`` when the server programs are missing or the server does not start.
    public static func shared() throws -> PostgreSQLTestServer { try sharedServer.get() }

    /// Starts a server of its own (stop it with ``stop()``).
    ///
    /// - Parameters:
    ///   - durable: `true` for PostgreSQL's default durability (benchmarks); `false` turns `fsync`
    ///     and `synchronous_commit` off, which tests do not need.
    ///   - settings: more `postgresql.conf` lines (`"autovacuum = off"`).
    public init(durable: Bool = false, settings extra: [String] = []) throws {
        let runAs = try Self.serverUser()
        // As root the server's user must reach the directory: /tmp, whatever TMPDIR says.
        let base = runAs == nil ? FileManager.default.temporaryDirectory : URL(fileURLWithPath: "/tmp")
        let programs = Programs(
            binaries: try Self.findBinaries(), runAs: runAs,
            directory: base.appendingPathComponent("strata-pg-\(UUID().uuidString)"), isDurable: durable,
            settings: extra)
        self.programs = programs
        let directory = programs.directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        chmod(directory.path, 0o755)
        var lastError: (any Error)?
        var started: Int?
        do {
            for owned in [programs.dataDirectory, programs.runDirectory] {
                try FileManager.default.createDirectory(at: owned, withIntermediateDirectories: true)
                try Self.giveDirectory(owned, to: runAs)
            }
            try programs.initialize()
            for _ in 0..<5 {
                let candidate = try Self.freePort()
                do {
                    try programs.start(port: candidate)
                    started = candidate
                    break
                } catch {
                    lastError = error
                }
            }
        } catch {
            lastError = error
        }
        guard let started else {
            try? FileManager.default.removeItem(at: directory)
            throw lastError ?? Failure(message: "the PostgreSQL test server did not start")
        }
        port = started
        programs.startWatchdog()
    }

    /// A store URL on this server for `schema` (one store per schema), with extra query options.
    public func url(schema: String, user: String? = nil, password: String? = nil, options: [String: String] = [:])
        -> URL
    {
        var components = URLComponents()
        components.scheme = "postgres"
        components.user = user ?? self.user
        components.password = password
        components.host = "127.0.0.1"
        components.port = port
        components.path = "/postgres"
        components.queryItems =
            [URLQueryItem(name: "schema", value: schema)]
            + options.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        // The components above always form a URL.
        return components.url!
    }

    /// A fresh schema name for `label` (lower case letters, digits and `_`, at most 63 bytes).
    public static func schemaName(_ label: String) -> String {
        let cleaned = label.lowercased().map { $0.isLetter && $0.isASCII || $0.isNumber && $0.isASCII ? $0 : "_" }
        return "t_" + String(cleaned.suffix(40)) + "_" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
    }

    /// Restarts the server (`pg_ctl restart -m fast`): every connection is dropped.
    public func restart() throws {
        try programs.run(
            "pg_ctl",
            [
                "-D", dataDirectory.path, "-l", logFile.path, "-w", "-t", "60", "-m", "fast",
                "restart",
            ])
    }

    /// Stops the server and removes its directory; idempotent.
    public func stop() {
        // Best effort: the server may already be stopped.
        try? programs.run("pg_ctl", ["-D", dataDirectory.path, "-w", "-t", "30", "-m", "fast", "stop"])
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: Finding programs and users

    /// The directory holding `initdb` and `pg_ctl`.
    static func findBinaries() throws -> URL {
        let manager = FileManager.default
        func has(_ directory: String) -> Bool {
            manager.isExecutableFile(atPath: directory + "/initdb")
                && manager.isExecutableFile(atPath: directory + "/pg_ctl")
        }
        var candidates: [String] = []
        if let explicit = ProcessInfo.processInfo.environment["STRATA_PG_BIN"] { candidates.append(explicit) }
        candidates += (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        let debian = "/usr/lib/postgresql"
        let versions = ((try? manager.contentsOfDirectory(atPath: debian)) ?? []).sorted {
            (Int($0) ?? 0, $0) > (Int($1) ?? 0, $1)
        }
        candidates += versions.map { "\(debian)/\($0)/bin" }
        candidates += ["/usr/local/pgsql/bin", "/opt/homebrew/bin", "/usr/local/bin"]
        for directory in candidates where has(directory) {
            // Resolve links (/usr/local/bin/initdb → /usr/lib/postgresql/15/bin/initdb) so that
            // pg_ctl finds the `postgres` program beside the real file.
            let real = URL(fileURLWithPath: directory + "/initdb").resolvingSymlinksInPath().deletingLastPathComponent()
            return has(real.path) ? real : URL(fileURLWithPath: directory)
        }
        throw Failure(
            message:
                "PostgreSQL's server programs (initdb, pg_ctl) are not installed; run scripts/setup.sh (apt-get install postgresql), or set STRATA_PG_BIN to the directory holding them"
        )
    }

    /// The user the server runs as when this process is root: `strata-pg`, created when missing.
    private static func serverUser() throws -> String? {
        guard getuid() == 0 else { return nil }
        let name = "strata-pg"
        if getpwnam(name) == nil {
            // The status does not matter: whether the user exists afterwards does.
            _ = try? ChildProcess.run([
                "/usr/sbin/useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name,
            ])
            guard getpwnam(name) != nil else {
                throw Failure(
                    message:
                        "PostgreSQL does not run as root and the user '\(name)' could not be created; run scripts/setup.sh or create it: useradd --system \(name)"
                )
            }
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser") else {
            throw Failure(message: "running the test server as '\(name)' needs runuser (util-linux)")
        }
        return name
    }

    /// Makes `directory` owned by `user` (when running as root), mode 0700.
    private static func giveDirectory(_ directory: URL, to user: String?) throws {
        if let user, let entry = getpwnam(user) {
            guard chown(directory.path, entry.pointee.pw_uid, entry.pointee.pw_gid) == 0 else {
                throw Failure(message: "cannot give \(directory.path) to \(user) (errno \(errno))")
            }
        }
        chmod(directory.path, 0o700)
    }

    /// A loopback port nothing listens on right now.
    public static func freePort() throws -> Int {
        #if os(Linux)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure(message: "cannot open a socket to find a free port") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else { throw Failure(message: "cannot bind a loopback socket to find a free port") }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { throw Failure(message: "cannot read the free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// The server's programs, user and files: what starting, stopping and restarting need.
private struct Programs: Sendable {
    static let superuser = "strata"
    let binaries: URL
    let runAs: String?
    let directory: URL
    let isDurable: Bool
    let settings: [String]
    var user: String { Self.superuser }

    var dataDirectory: URL { directory.appendingPathComponent("data") }
    /// The server's socket directory and log, owned by the server's user.
    var runDirectory: URL { directory.appendingPathComponent("run") }
    var logFile: URL { runDirectory.appendingPathComponent("server.log") }

    func initialize() throws {
        try run(
            "initdb",
            ["-D", dataDirectory.path, "-U", user, "--auth=trust", "--encoding=UTF8", "--locale=C", "-N"])
        var settings = [
            "listen_addresses = '127.0.0.1'", "unix_socket_directories = '\(runDirectory.path)'",
            "max_connections = 400",
            "shared_buffers = 64MB", "log_min_messages = warning",
        ]
        if !isDurable { settings += ["fsync = off", "synchronous_commit = off", "full_page_writes = off"] }
        settings += self.settings
        let conf = dataDirectory.appendingPathComponent("postgresql.conf")
        let existing = try String(contentsOf: conf, encoding: .utf8)
        try (existing + "\n# strata test server\n" + settings.joined(separator: "\n") + "\n").write(
            to: conf, atomically: false, encoding: .utf8)
        let hba = """
            local all all trust
            host all \(user) 127.0.0.1/32 trust
            host all all 127.0.0.1/32 scram-sha-256

            """
        try hba.write(to: dataDirectory.appendingPathComponent("pg_hba.conf"), atomically: false, encoding: .utf8)
    }

    func start(port: Int) throws {
        try run(
            "pg_ctl",
            [
                "-D", dataDirectory.path, "-l", logFile.path, "-w", "-t", "60",
                "-o", "-p \(port)", "start",
            ])
    }

    /// A process that waits for this one to end, then stops the server and removes its directory,
    /// so a test run that is killed leaves nothing running.
    func startWatchdog() {
        let pid = ProcessInfo.processInfo.processIdentifier
        let stop = command("pg_ctl", ["-D", dataDirectory.path, "-m", "immediate", "stop"])
        let script =
            "while kill -0 \(pid) 2>/dev/null; do sleep 1; done; \(stop.map(Self.shellQuoted).joined(separator: " ")) >/dev/null 2>&1; rm -rf \(Self.shellQuoted(directory.path))"
        // Best effort: without the watchdog, the exit handler still stops the server.
        _ = try? ChildProcess.start(["/bin/sh", "-c", script])
    }

    static func shellQuoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// The command line that runs server program `name` as the server's user.
    func command(_ name: String, _ arguments: [String]) -> [String] {
        let program = binaries.appendingPathComponent(name).path
        guard let runAs else { return [program] + arguments }
        return ["/usr/sbin/runuser", "-u", runAs, "--", program] + arguments
    }

    /// Runs a server program and waits; its output goes to `commands.log` in the directory.
    func run(_ name: String, _ arguments: [String]) throws {
        let line = command(name, arguments)
        let log = directory.appendingPathComponent("commands.log")
        if !FileManager.default.fileExists(atPath: log.path) {
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        }
        let descriptor = open(log.path, O_WRONLY | O_APPEND)
        guard descriptor >= 0 else { throw PostgreSQLTestServer.Failure(message: "cannot open \(log.path)") }
        defer { close(descriptor) }
        let status = try ChildProcess.run(line, output: descriptor)
        guard status == 0 else {
            let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            let serverLog = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            throw PostgreSQLTestServer.Failure(
                message:
                    "\(name) \(arguments.joined(separator: " ")) failed with status \(status):\n\(output.suffix(2000))\n\(serverLog.suffix(2000))"
            )
        }
    }

}

/// The process's shared server, started once under a lock and stopped at exit.
private final class SharedServer: @unchecked Sendable {
    // @unchecked Sendable: `server` and `failure` are read and written only while `lock` is held.
    private let lock = NSLock()
    private var server: PostgreSQLTestServer?
    private var failure: PostgreSQLTestServer.Failure?
    /// The started server, for the exit handler (a C function pointer cannot capture it).
    /// `nonisolated(unsafe)`: written once, under `lock`, before the exit handler that reads it is
    /// registered; the handler runs at exit, after the tests.
    nonisolated(unsafe) static var current: PostgreSQLTestServer?

    func get() throws -> PostgreSQLTestServer {
        lock.lock()
        defer { lock.unlock() }
        if let server { return server }
        if let failure { throw failure }
        do {
            let started = try PostgreSQLTestServer(durable: false)
            server = started
            Self.current = started
            atexit { SharedServer.current?.stop() }
            return started
        } catch let error as PostgreSQLTestServer.Failure {
            failure = error
            throw error
        }
    }
}
