import Foundation
import Strata
import Synchronization

/// Which file an environment has open: its device and inode, so every path that reaches the
/// file (a symbolic link, a hard link, `a/../b`) names the same environment (E1).
struct LMDBFileKey: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64

    /// The key of the file at `path` (symbolic links followed), or `nil` when there is none.
    init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }
}

/// Environments by file, shared by every driver of this process that opens the same store (E1).
///
/// LMDB forbids opening one file twice in a process: closing the second `MDB_env` drops the
/// first one's POSIX locks, and two environments keep two views of the free pages. So the table
/// is keyed by the data file's device and inode, never by the path used to reach it.
///
/// Thread safety: every operation runs under one mutex, the file checks and `mdb_env_open`
/// included, so two opens of one file in this process cannot both miss the table.
enum EnvironmentRegistry {
    private struct Entry {
        var environment: LMDBEnvironment
        var users: Int
    }
    private static let entries = Locked<[LMDBFileKey: Entry]>([:])

    /// The environment of the store at `location`, opened when no driver of this process has its
    /// data file open.
    ///
    /// - Throws: ``StoreError/Code/readOnly`` when the file is open read-only in this process and
    ///   a writer asks; whatever opening throws.
    static func acquire(_ location: LMDBLocation, options: LMDBOptions, readOnly: Bool) throws -> LMDBEnvironment {
        try entries.withLock { table in
            if let key = LMDBFileKey(path: location.dataFile), var entry = table[key] {
                if entry.environment.isReadOnly && !readOnly {
                    throw StoreError(
                        .readOnly,
                        "the store is already open read-only in this process (as \(entry.environment.path)); close that store first",
                        store: location.path)
                }
                entry.users += 1
                table[key] = entry
                return entry.environment
            }
            let environment = try LMDBEnvironment(
                path: location.path, isDirectory: location.isDirectory, options: options, readOnly: readOnly)
            guard let key = LMDBFileKey(path: location.dataFile) else {
                throw StoreError(
                    .io, "LMDB opened the store but its data file \(location.dataFile) cannot be found; check the path",
                    store: location.path)
            }
            table[key] = Entry(environment: environment, users: 1)
            return environment
        }
    }

    /// Whether a driver of this process has the store at `location` open.
    static func isOpen(_ location: LMDBLocation) -> Bool {
        guard let key = LMDBFileKey(path: location.dataFile) else { return false }
        return entries.withLock { $0[key] != nil }
    }

    /// Releases one use; the environment closes with its last user.
    static func release(_ environment: LMDBEnvironment) {
        entries.withLock { table in
            guard let (key, entry) = table.first(where: { $0.value.environment === environment }) else { return }
            var updated = entry
            updated.users -= 1
            table[key] = updated.users == 0 ? nil : updated
        }
    }

    /// How many drivers of this process use the environment of the data file at `path`, whatever
    /// path reached it (for tests; 0 when none has it open).
    static func userCount(ofDataFile path: String) -> Int {
        guard let key = LMDBFileKey(path: path) else { return 0 }
        return entries.withLock { $0[key]?.users ?? 0 }
    }
}
