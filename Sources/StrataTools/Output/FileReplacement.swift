import Foundation

/// Puts a new file in place of another the way the XML driver saves a store: the new content is
/// complete in a temporary file beside the destination (symbolic links followed) before anything
/// touches the destination; it is fsynced, given the old file's mode and (where the process may)
/// owner and group, renamed over the destination in one step, and the directory is fsynced. A
/// failure or a kill at any moment leaves the old destination or the complete new one.
///
/// A new destination is created 0666 less the umask.
///
/// Thread safety: stateless; each call works on the paths it is given.
public enum FileReplacement {
    /// The file `path` names: symbolic links followed, also to a file that does not exist yet,
    /// so replacing it keeps the link.
    ///
    /// - Throws: ``ToolError`` (failure) for links that loop or cannot be read.
    public static func target(of path: String) throws -> String {
        var current = path
        for _ in 0..<40 {  // the kernel's own limit on links followed in one lookup
            var status = stat()
            guard lstat(current, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return current }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(current, &buffer, buffer.count - 1)
            guard count >= 0 else { throw failure("cannot read the symbolic link '\(current)'", errno) }
            let destination = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = destination.hasPrefix("/") ? destination : directory(of: current) + "/" + destination
        }
        throw failure("cannot follow the symbolic links of '\(path)'", ELOOP)
    }

    /// A fresh hidden path in the directory of `target`, named after it.
    ///
    /// - Parameter tag: What the temporary file is for (`partial`, `converting`).
    public static func temporaryPath(beside target: String, tag: String, keepingExtension: Bool = false) -> String {
        let name = (target as NSString).lastPathComponent
        let ext = (name as NSString).pathExtension
        let base = keepingExtension && !ext.isEmpty ? (name as NSString).deletingPathExtension : name
        let random = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let temporary = ".\(base).\(tag)-\(getpid())-\(random)"
        return directory(of: target) + "/" + (keepingExtension && !ext.isEmpty ? "\(temporary).\(ext)" : temporary)
    }

    /// Makes the complete file at `temporary` the file at `target`: fsyncs it, gives it the mode,
    /// owner and group of the file it replaces, renames it over `target` (or, without
    /// `overwrite`, links it there only if nothing is there yet) and fsyncs the directory.
    ///
    /// - Throws: ``ToolError``: usage when `target` exists and `overwrite` is false (the
    ///   temporary file is left for the caller to remove); failure for a system call that failed,
    ///   saying whether the destination was replaced.
    public static func install(_ temporary: String, over target: String, overwrite: Bool) throws {
        let descriptor = open(temporary, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("cannot open '\(temporary)'", errno) }
        defer { close(descriptor) }
        var old = stat()
        if stat(target, &old) == 0 {
            guard overwrite else { throw ToolError.usage("'\(target)' already exists; pass --overwrite to replace it") }
            guard old.st_mode & S_IFMT == S_IFREG else {
                throw ToolError.failure(
                    "'\(target)' is not a regular file (a directory?); it was left as it was. Choose a file path")
            }
            if old.st_uid != geteuid() || old.st_gid != getegid() {
                // A process that may not give the file away keeps its own user (and, when not a
                // member, group), as any file it creates would; not an error.
                if fchown(descriptor, old.st_uid, old.st_gid) != 0 { _ = fchown(descriptor, uid_t.max, old.st_gid) }
            }
            guard fchmod(descriptor, old.st_mode & 0o7777) == 0 else {
                throw failure("cannot give the new file the permissions of '\(target)' (left as it was)", errno)
            }
        }
        guard fsync(descriptor) == 0 else {
            throw failure("cannot fsync the new file; '\(target)' was left as it was", errno)
        }
        if overwrite {
            guard rename(temporary, target) == 0 else {
                throw failure("cannot rename the new file over '\(target)' (left as it was)", errno)
            }
        } else {
            // link(2) fails with EEXIST instead of replacing a file created since the check.
            guard link(temporary, target) == 0 else {
                if errno == EEXIST {
                    throw ToolError.usage("'\(target)' already exists; pass --overwrite to replace it")
                }
                throw failure("cannot put the new file at '\(target)'", errno)
            }
            unlink(temporary)
        }
        let folder = open(directory(of: target), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        let synced = folder >= 0 && fsync(folder) == 0
        let code = errno
        if folder >= 0 { close(folder) }
        guard synced else {
            throw failure(
                "'\(target)' holds the new content, but its directory could not be fsynced, so a system crash may still undo it; check the file system",
                code)
        }
    }

    /// The directory part of `path` (`.` when it has none).
    static func directory(of path: String) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        return directory.isEmpty ? "." : directory
    }

    static func failure(_ what: String, _ code: Int32) -> ToolError {
        ToolError.failure("\(what): \(String(cString: strerror(code)))")
    }
}

/// A file written through ``FileReplacement``: text goes to a temporary file beside the
/// destination, and ``commit()`` puts it in place; until then the destination is untouched.
///
/// Thread safety: none; one writer belongs to one command.
public final class ReplacingFileWriter {
    /// The file being replaced (symbolic links followed).
    public let target: String
    private let temporary: String
    private var descriptor: Int32
    private var buffer: [UInt8] = []

    /// Creates the temporary file beside `path`'s target, 0666 less the umask.
    ///
    /// - Throws: ``ToolError`` (failure) when it cannot be created.
    public init(path: String) throws {
        target = try FileReplacement.target(of: path)
        temporary = FileReplacement.temporaryPath(beside: target, tag: "partial")
        descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            throw FileReplacement.failure("cannot create a file in '\(FileReplacement.directory(of: target))'", errno)
        }
    }

    /// Appends `text`.
    public func write(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { try flush() }
    }

    private func flush() throws {
        var written = 0
        while written < buffer.count {
            let count = buffer.withUnsafeBytes {
                Foundation.write(descriptor, $0.baseAddress! + written, $0.count - written)
            }  // non-empty here
            if count < 0 {
                if errno == EINTR { continue }
                throw FileReplacement.failure("cannot write '\(target)' (left as it was)", errno)
            }
            written += count
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Puts the complete file in place of the target (``FileReplacement/install(_:over:overwrite:)``).
    public func commit() throws {
        defer { discard() }
        try flush()
        guard close(descriptor) == 0 else {
            descriptor = -1
            throw FileReplacement.failure("cannot write '\(target)' (left as it was)", errno)
        }
        descriptor = -1
        try FileReplacement.install(temporary, over: target, overwrite: true)
    }

    /// Removes the temporary file; the target stays as it was. Idempotent.
    public func discard() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        unlink(temporary)  // after a commit the name is gone and this fails harmlessly
    }

    deinit { discard() }
}
