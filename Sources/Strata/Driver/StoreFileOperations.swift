import Foundation

/// File operations on closed stores, used by the default implementations of
/// ``StoreDriverFactory/replaceStore(at:withStoreFrom:options:)``, ``StoreDriverFactory/destroyStore(at:options:)``
/// and ``StoreDriverFactory/copyStore(from:to:options:)``, and available to drivers that
/// override them after checks of their own.
///
/// A store is its ``StoreDriverFactory/storeFiles(at:options:)``: the main file (or directory)
/// first, then companion files named by appending a suffix to its path (`-wal`, `.lock`).
///
/// Thread safety: stateless; each call works on the paths it is given.
public enum StoreFileOperations {
    /// The path `path` names once symbolic links are followed (also to a file that does not
    /// exist yet), so that replacing a store keeps a link that points at it.
    ///
    /// - Throws: ``StoreError`` `.io` for links that loop or cannot be read.
    public static func resolvedPath(_ path: String) throws -> String {
        var current = path
        for _ in 0..<40 {  // the kernel's own limit on links followed in one lookup
            var status = stat()
            guard lstat(current, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return current }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(current, &buffer, buffer.count - 1)
            guard count >= 0 else { throw failure("cannot read the symbolic link", path: current, errno) }
            let destination = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = destination.hasPrefix("/") ? destination : directory(of: current) + "/" + destination
        }
        throw failure("cannot follow the symbolic links", path: path, ELOOP)
    }

    /// A fresh hidden path beside `path`'s target, with the same extension:
    /// `.<name>.<tag>-<pid>-<random>.<ext>`.
    public static func temporaryPath(beside path: String, tag: String) throws -> String {
        let target = try resolvedPath(path)
        let name = (target as NSString).lastPathComponent
        let ext = (name as NSString).pathExtension
        let base = ext.isEmpty ? name : (name as NSString).deletingPathExtension
        let random = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let temporary = ".\(base).\(tag)-\(getpid())-\(random)" + (ext.isEmpty ? "" : ".\(ext)")
        return directory(of: target) + "/" + temporary
    }

    /// Temporary stores beside `path` made by ``temporaryPath(beside:tag:)`` with `tag` in a
    /// process that no longer runs.
    public static func staleTemporaryPaths(beside path: String, tag: String) -> [String] {
        guard let target = try? resolvedPath(path) else { return [] }  // a broken link has no temporaries to find
        let name = (target as NSString).lastPathComponent
        let ext = (name as NSString).pathExtension
        let base = ext.isEmpty ? name : (name as NSString).deletingPathExtension
        let prefix = ".\(base).\(tag)-"
        let folder = directory(of: target)
        // An unreadable directory has nothing we could remove either.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.compactMap { entry -> String? in
            guard entry.hasPrefix(prefix), let pid = Int32(entry.dropFirst(prefix.count).prefix { $0 != "-" }) else {
                return nil
            }
            guard pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { return nil }
            return folder + "/" + entry
        }
    }

    /// Makes the complete, closed store at `source` the store at `destination` in one `rename(2)`:
    /// the main file is fsynced, given the mode (and, where allowed, owner) of the file it
    /// replaces, renamed over the destination's target (links followed), and the directory is
    /// fsynced. Companion files of the source (`suffixes`) are removed afterwards; the
    /// destination's own companions are left alone (a driver checks them before calling this).
    ///
    /// A kill at any moment leaves the old destination or the new one.
    ///
    /// - Throws: ``StoreError`` `.io` naming the step, saying whether the destination was replaced.
    public static func replace(_ destination: String, with source: String, companionSuffixes suffixes: [String] = [])
        throws
    {
        let target = try resolvedPath(destination)
        let descriptor = open(source, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw failure("cannot open the new store; the old one was left as it was", path: source, errno)
        }
        defer { close(descriptor) }
        var old = stat()
        if stat(target, &old) == 0 {
            if old.st_uid != geteuid() || old.st_gid != getegid() {
                // A process that may not give the file away keeps its own user, as any file it creates would.
                if fchown(descriptor, old.st_uid, old.st_gid) != 0 { _ = fchown(descriptor, uid_t.max, old.st_gid) }
            }
            _ = fchmod(descriptor, old.st_mode & 0o7777)  // best effort: the new store keeps the umask's mode otherwise
        }
        guard fsync(descriptor) == 0 else {
            throw failure("cannot fsync the new store; the old one was left as it was", path: source, errno)
        }
        guard rename(source, target) == 0 else {
            throw failure("cannot rename the new store over the old one (left as it was)", path: target, errno)
        }
        for suffix in suffixes { unlink(source + suffix) }
        try syncDirectory(of: target)
    }

    /// Fsyncs the directory holding `path`, so a rename in it survives a system crash.
    public static func syncDirectory(of path: String) throws {
        let folder = open(directory(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        let synced = folder >= 0 && fsync(folder) == 0
        let code = errno
        if folder >= 0 { close(folder) }
        guard synced else {
            throw failure(
                "the new store is in place, but its directory could not be fsynced, so a system crash may still undo it",
                path: path, code)
        }
    }

    /// Fsyncs a file.
    public static func syncFile(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("cannot open", path: path, errno) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw failure("cannot fsync", path: path, errno) }
    }

    /// Removes `paths` (files or directories); a path that does not exist is not an error.
    ///
    /// - Throws: ``StoreError`` `.io` for one that exists and cannot be removed.
    public static func remove(_ paths: [String]) throws {
        for path in paths {
            var status = stat()
            guard lstat(path, &status) == 0 else { continue }
            do {
                try FileManager.default.removeItem(atPath: path)
            } catch {
                throw StoreError(
                    .io, "cannot remove \(path): \(error.localizedDescription)", store: path, underlying: error)
            }
        }
    }

    /// Copies the closed store files `files` (main file or directory first) to the same names
    /// with `destination` in place of `source`'s path, each through a temporary file fsynced and
    /// renamed into place; files that do not exist are skipped. Temporaries an earlier copy to
    /// the same names left when its process died (``staleTemporaryPaths(beside:tag:)``) are removed.
    ///
    /// - Throws: ``StoreError`` `.io` (or `.full` when the disk fills).
    public static func copy(_ files: [String], from source: String, to destination: String) throws {
        for file in files {
            guard file.hasPrefix(source) else { continue }
            let target = destination + file.dropFirst(source.count)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) else { continue }
            if isDirectory.boolValue {
                try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
                for entry in try FileManager.default.contentsOfDirectory(atPath: file) {
                    try copy([file + "/" + entry], from: file, to: target)
                }
                continue
            }
            // Temporaries of copies to this place killed before their rename (a backup taken
            // by a migration that was killed) would stay hidden beside it for good.
            for stale in staleTemporaryPaths(beside: target, tag: "copying") {
                unlink(stale)  // best effort: a leftover that stays is hidden and changes nothing
            }
            let temporary = try temporaryPath(beside: target, tag: "copying")
            do {
                try copyBytes(file, to: temporary)
                try syncFile(temporary)
                guard rename(temporary, target) == 0 else {
                    throw failure("cannot rename the copy into place", path: target, errno)
                }
            } catch {
                unlink(temporary)
                throw error
            }
        }
        try syncDirectory(of: destination)
    }

    private static func copyBytes(_ from: String, to: String) throws {
        let input = open(from, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw failure("cannot open", path: from, errno) }
        defer { close(input) }
        let output = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard output >= 0 else { throw failure("cannot create", path: to, errno) }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("cannot read", path: from, errno)
            }
            if count == 0 { break }
            var written = 0
            while written < count {
                // non-empty buffer
                let step = buffer.withUnsafeBytes { write(output, $0.baseAddress! + written, count - written) }
                if step < 0 {
                    if errno == EINTR { continue }
                    throw failure("cannot write", path: to, errno)
                }
                written += step
            }
        }
    }

    /// Bytes free for unprivileged users in the file system holding `path`, or `nil` when unknown.
    public static func freeBytes(near path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(directory(of: (try? resolvedPath(path)) ?? path), &info) == 0 else { return nil }
        return Int64(info.f_bavail) &* Int64(info.f_frsize)
    }

    /// The bytes `paths` take (directories summed), missing ones counting 0.
    public static func size(of paths: [String]) -> Int64 {
        var total: Int64 = 0
        for path in paths {
            var status = stat()
            guard stat(path, &status) == 0 else { continue }
            if status.st_mode & S_IFMT == S_IFDIR {
                // unreadable: counts 0
                let entries = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                total += size(of: entries.map { path + "/" + $0 })
            } else {
                total += Int64(status.st_size)
            }
        }
        return total
    }

    /// The directory part of `path` (`.` when it has none).
    public static func directory(of path: String) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        return directory.isEmpty ? "." : directory
    }

    static func failure(_ what: String, path: String, _ code: Int32) -> StoreError {
        let storeCode: StoreError.Code = code == ENOSPC || code == EDQUOT ? .full : .io
        return StoreError(storeCode, "\(what): \(String(cString: strerror(code)))", store: path)
    }
}
