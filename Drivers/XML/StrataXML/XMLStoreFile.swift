import Foundation
import Strata
import Synchronization

// XML STORE FILE INVARIANTS
// F1. The store file is only ever replaced by rename(2) of a complete, fsynced temporary file in
//     the same directory, and the directory is fsynced after the rename: a crash leaves the old
//     file or the new one, never a torn one.
// F2. Temporary files are named `.<store name>.strata-tmp-<pid>-<random>`; a writer that failed
//     removes its own; a writer that opens the store (holding the lock) removes stale ones.
// F3. At most one writer per store path across processes: a writer holds an exclusive flock(2) on
//     `<store path>.lock` from open to close. Readers take no lock; rename keeps their view whole.

/// The file side of an XML store: atomic replacement and the writer lock.
///
/// Thread safety: `Sendable`; the lock's descriptor is set once at open and released once at
/// close, under a mutex.
final class XMLStoreFile: Sendable {
    /// The store file.
    let url: URL
    private let lockDescriptor: Mutex<Int32>

    /// Opens the file side of a store; writers take the lock.
    ///
    /// - Throws: ``StoreError/Code/locked`` when another writer holds the store past `timeout`.
    init(url: URL, writer: Bool, timeout: Double) throws {
        self.url = url
        self.lockDescriptor = Mutex(-1)
        guard writer else { return }
        let descriptor = try Self.acquireLock(path: url.path + ".lock", store: url.path, timeout: timeout)
        lockDescriptor.withLock { $0 = descriptor }
        removeStaleTemporaryFiles()
    }

    var path: String { url.path }

    /// Writes a new version of the file: `body` writes the bytes into a temporary file, which is
    /// fsynced and renamed over the store, and then the directory is fsynced (F1).
    ///
    /// - Returns: The identity of the new file, or `nil` when it could not be read.
    @discardableResult
    func replace(_ body: (inout XMLByteWriter) throws -> Void) throws -> FileIdentity? {
        let directory = url.deletingLastPathComponent().path
        let temporary = directory + "/." + url.lastPathComponent + ".strata-tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw Self.ioError("could not create a temporary file in \(directory)", path: path, errno: errno) }
        var renamed = false
        var identity: FileIdentity?
        defer { if !renamed { unlink(temporary) } }
        do {
            var writer = XMLByteWriter(descriptor: descriptor, path: path)
            try body(&writer)
            try writer.flush()
            guard fsync(descriptor) == 0 else { throw Self.ioError("could not fsync the temporary file", path: path, errno: errno) }
            var status = stat()
            if fstat(descriptor, &status) == 0 { identity = FileIdentity(status) }
        } catch {
            close(descriptor)
            throw error
        }
        guard close(descriptor) == 0 else { throw Self.ioError("could not close the temporary file", path: path, errno: errno) }
        guard rename(temporary, path) == 0 else { throw Self.ioError("could not rename the temporary file over the store", path: path, errno: errno) }
        renamed = true
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            defer { close(directoryDescriptor) }
            guard fsync(directoryDescriptor) == 0 else {
                throw Self.ioError("the store was replaced but its directory could not be fsynced", path: path, errno: errno)
            }
        }
        return identity
    }

    /// Releases the writer lock; idempotent.
    func unlock() {
        lockDescriptor.withLock { descriptor in
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }
    }

    deinit { unlock() }

    private func removeStaleTemporaryFiles() {
        let directory = url.deletingLastPathComponent()
        let prefix = "." + url.lastPathComponent + ".strata-tmp-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        for name in names where name.hasPrefix(prefix) {
            unlink(directory.appendingPathComponent(name).path)
        }
    }

    private static func acquireLock(path lockPath: String, store: String, timeout: Double) throws -> Int32 {
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw ioError("could not open the lock file \(lockPath)", path: store, errno: errno) }
        let deadline = Date().addingTimeInterval(max(timeout, 0))
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            guard code == EWOULDBLOCK, Date() < deadline else {
                close(descriptor)
                if code != EWOULDBLOCK { throw ioError("could not lock \(lockPath)", path: store, errno: code) }
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
    /// ``StoreError/Code/io`` otherwise.
    static func ioError(_ what: String, path: String, errno code: Int32) -> StoreError {
        let reason = String(cString: strerror(code))
        let kind: StoreError.Code = (code == ENOSPC || code == EDQUOT) ? .full : .io
        return StoreError(kind, "\(what): \(reason); the store file is unchanged", store: path)
    }
}
