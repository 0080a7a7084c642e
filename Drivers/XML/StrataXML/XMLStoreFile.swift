import Foundation
import Strata
import Synchronization

// XML STORE FILE INVARIANTS
// F1. The store file is only ever replaced by rename(2) of a complete, fsynced temporary file in
//     the same directory as the file it replaces, and that directory is fsynced after the rename:
//     a crash leaves the old file or the new one, never a torn one.
// F2. Temporary files are named `.<store name>.strata-tmp-<pid>-<random>`; a writer that failed
//     removes its own; a writer that opens the store (holding the lock) removes stale ones.
// F3. At most one writer per store file across processes: a writer holds an exclusive flock(2) on
//     `<target>.lock` from open to close, where the target is the store path with symbolic links
//     followed, so every spelling of the path takes the same lock. Readers take no lock; rename
//     keeps their view whole.
// F4. The file a save writes is the target: a symbolic link at the store path stays a link, and
//     the file it names is replaced. The new file takes the old one's permission bits and (where
//     the process may) its owner and group; a new store file is created 0666 less the umask.
// F5. `replace` throws ``XMLStoreFile/Replaced`` exactly when the rename happened but the
//     directory could not be fsynced: the new content is in place. Every other error leaves the
//     old file in place, untouched.

/// The file side of an XML store: atomic replacement and the writer lock.
///
/// Thread safety: `Sendable`; the lock's descriptor is set once at open and released once at
/// close, under a mutex.
final class XMLStoreFile: Sendable {
    /// The store path as given (named in messages).
    let url: URL
    /// The file the store path names, symbolic links followed (F4); written by saves.
    let target: String
    private let lockDescriptor: Locked<Int32>

    /// The failure of a save whose new file did take the store's name (F5): readers see the new
    /// content, but it may not survive a system crash.
    struct Replaced: Error {
        /// The error to report, saying the new content is in place.
        var error: StoreError
        /// The identity of the new file, or `nil` when it could not be read.
        var identity: FileIdentity?
    }

    /// Opens the file side of a store; writers take the lock.
    ///
    /// - Throws: ``StoreError/Code/locked`` when another writer holds the store past `timeout`;
    ///   ``StoreError/Code/io`` when the path's symbolic links cannot be followed.
    init(url: URL, writer: Bool, timeout: Double) throws {
        self.url = url
        self.target = try Self.resolve(url.path)
        self.lockDescriptor = Locked(-1)
        guard writer else { return }
        let descriptor = try Self.acquireLock(path: target + ".lock", store: url.path, timeout: timeout)
        lockDescriptor.withLock { $0 = descriptor }
        removeStaleTemporaryFiles()
    }

    /// The store path as given, for messages.
    var path: String { url.path }

    /// Writes a new version of the file: `body` writes the bytes into a temporary file beside the
    /// target, which is given the old file's mode and owner, fsynced and renamed over the target,
    /// and then the directory is fsynced (F1, F4).
    ///
    /// - Returns: The identity of the new file, or `nil` when it could not be read.
    /// - Throws: ``Replaced`` when only the directory fsync failed (F5); any other error means the
    ///   store file is unchanged.
    @discardableResult
    func replace(_ body: (inout XMLByteWriter) throws -> Void) throws -> FileIdentity? {
        let directory = Self.directory(of: target)
        let name = (target as NSString).lastPathComponent
        let temporary = directory + "/." + name + ".strata-tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        var old = stat()
        let existing = stat(target, &old) == 0 ? old : nil
        // A new store file follows the umask (0666 less it); a replaced one keeps its mode, set below.
        let injected = Self.injectedFailure(for: target)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, existing == nil ? 0o666 : 0o600)
        guard descriptor >= 0 else {
            throw Self.ioError("could not create a temporary file in \(directory)", path: path, errno: errno)
        }
        var renamed = false
        var identity: FileIdentity?
        defer { if !renamed { unlink(temporary) } }
        do {
            if let existing { try Self.copyOwnership(existing, to: descriptor, path: path) }
            var writer = XMLByteWriter(descriptor: descriptor, path: path)
            try body(&writer)
            try writer.flush()
            if let injected, injected.step == .write {
                throw Self.ioError("could not write", path: path, errno: injected.errno)
            }
            guard injected?.step != .fileSync, fsync(descriptor) == 0 else {
                throw Self.ioError("could not fsync the temporary file", path: path, errno: injected?.errno ?? errno)
            }
            var status = stat()
            if fstat(descriptor, &status) == 0 { identity = FileIdentity(status) }
        } catch {
            close(descriptor)
            throw error
        }
        guard close(descriptor) == 0 else {
            throw Self.ioError("could not close the temporary file", path: path, errno: errno)
        }
        guard injected?.step != .rename, rename(temporary, target) == 0 else {
            throw Self.ioError(
                "could not rename the temporary file over the store", path: path, errno: injected?.errno ?? errno)
        }
        renamed = true
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        let synced = directoryDescriptor >= 0 && injected?.step != .directorySync && fsync(directoryDescriptor) == 0
        let code = injected?.errno ?? errno
        if directoryDescriptor >= 0 { close(directoryDescriptor) }
        guard synced else {
            let reason = String(cString: strerror(code))
            throw Replaced(
                error: StoreError(
                    .notDurable,
                    "the save is in the store file (readers see it), but its directory \(directory) could not be fsynced: \(reason); a system crash may still lose this save. Check the file system, then save again to make it durable",
                    store: path),
                identity: identity)
        }
        return identity
    }

    // MARK: Failure injection

    /// A step of ``replace(_:)`` a test makes fail.
    enum Step: Sendable {
        case write, fileSync, rename, directorySync
    }

    /// Failures tests inject, by target path: the next saves of that store fail at `step` with
    /// `errno`, as the system call would. Empty outside tests; a save pays one lookup.
    static let injectedFailures = Locked<[String: (step: Step, errno: Int32)]>([:])

    private static func injectedFailure(for target: String) -> (step: Step, errno: Int32)? {
        injectedFailures.withLock { $0.isEmpty ? nil : $0[target] }
    }

    /// Releases the writer lock; idempotent.
    func unlock() {
        lockDescriptor.withLock { descriptor in
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }
    }

    deinit { unlock() }

    /// Gives the temporary file the mode, owner and group of the file it replaces (F4).
    ///
    /// The owner and group are set first, since changing them may clear set-id bits. A process
    /// that may not give the file away (not root, or not a member of the group) keeps its own user
    /// and group, as any file it creates would; that is not an error.
    private static func copyOwnership(_ old: stat, to descriptor: Int32, path: String) throws {
        if old.st_uid != geteuid() || old.st_gid != getegid() {
            if fchown(descriptor, old.st_uid, old.st_gid) != 0 {
                // Not permitted to give the file away: keep at least the group when allowed to.
                _ = fchown(descriptor, uid_t.max, old.st_gid)  // uid_t.max (-1) leaves the owner as it is
            }
        }
        guard fchmod(descriptor, old.st_mode & 0o7777) == 0 else {
            throw ioError("could not give the temporary file the store file's permissions", path: path, errno: errno)
        }
    }

    /// The directory part of `path` (`.` when it has none).
    static func directory(of path: String) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        return directory.isEmpty ? "." : directory
    }

    /// `path` with symbolic links in its last component followed, also to a target that does not
    /// exist yet (the first save creates it).
    ///
    /// - Throws: ``StoreError/Code/io`` for a loop of links or a link that cannot be read.
    static func resolve(_ path: String) throws -> String {
        var current = path
        for _ in 0..<40 {  // the kernel's own limit on links followed in one lookup
            var status = stat()
            guard lstat(current, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return current }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(current, &buffer, buffer.count - 1)
            guard count >= 0 else {
                throw ioError("could not read the symbolic link \(current)", path: path, errno: errno, unchanged: false)
            }
            let destination = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = destination.hasPrefix("/") ? destination : directory(of: current) + "/" + destination
        }
        throw ioError(
            "could not follow the symbolic links of the store path", path: path, errno: ELOOP, unchanged: false)
    }

    private func removeStaleTemporaryFiles() {
        let directory = Self.directory(of: target)
        let prefix = "." + (target as NSString).lastPathComponent + ".strata-tmp-"
        // A directory that cannot be listed only leaves stale temporary files behind; the store
        // is not affected.
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(prefix) {
            unlink(directory + "/" + name)
        }
    }

    private static func acquireLock(path lockPath: String, store: String, timeout: Double) throws -> Int32 {
        // Created 0666 less the umask, like the store file.
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            throw ioError("could not open the lock file \(lockPath)", path: store, errno: errno, unchanged: false)
        }
        let deadline = Date().addingTimeInterval(max(timeout, 0))
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            guard code == EWOULDBLOCK, Date() < deadline else {
                close(descriptor)
                if code != EWOULDBLOCK {
                    throw ioError("could not lock \(lockPath)", path: store, errno: code, unchanged: false)
                }
                throw StoreError(
                    .locked,
                    "another writer has the store open (lock file \(lockPath) held for \(timeout) s); close it first, or open this store read-only (StoreOptions(isReadOnly: true)) to read its last save",
                    store: store)
            }
            usleep(10_000)
        }
        return descriptor
    }

    /// A ``StoreError`` for a failed system call: ``StoreError/Code/full`` when the disk is full,
    /// ``StoreError/Code/io`` otherwise. With `unchanged` (a failure before the rename) the
    /// message says the store file is as it was.
    static func ioError(_ what: String, path: String, errno code: Int32, unchanged: Bool = true) -> StoreError {
        let reason = String(cString: strerror(code))
        let kind: StoreError.Code = (code == ENOSPC || code == EDQUOT) ? .full : .io
        return StoreError(kind, "\(what): \(reason)\(unchanged ? "; the store file is unchanged" : "")", store: path)
    }
}
