import Foundation
import Strata

/// Where an LMDB store lives, worked out before LMDB sees the path, and the checks a file must
/// pass before LMDB maps it.
///
/// LMDB trusts its file: it maps it and follows page numbers without bounds checks, so a
/// truncated or damaged file can crash the process (SIGBUS past the end of the file, SIGSEGV on a
/// wild pointer) instead of failing. What can be checked cheaply is checked here (docs/formats/
/// lmdb.md, "What is checked before LMDB opens a file").
///
/// Thread safety: a value; `Sendable`.
struct LMDBLocation: Sendable {
    /// The path as given, for messages.
    let given: String
    /// The path handed to LMDB: symbolic links followed, so its lock file (`<path>-lock`) sits
    /// beside the real file whichever spelling opened it.
    let path: String
    /// Whether the store is an LMDB directory (holding `data.mdb` and `lock.mdb`).
    let isDirectory: Bool
    /// Whether the store exists yet.
    let exists: Bool

    /// The file holding the data: `path`, or `data.mdb` in the directory form.
    var dataFile: String { isDirectory ? path + "/data.mdb" : path }

    /// Resolves `given`: an existing store by `realpath(3)`; a new one (also behind a symbolic link
    /// to a file that does not exist yet) in the real path of its directory.
    ///
    /// - Throws: ``StoreError/Code/notFound`` when the directory for a new store is missing;
    ///   ``StoreError/Code/io`` for links that loop or cannot be read.
    static func resolve(_ given: String) throws -> LMDBLocation {
        var target = given
        for _ in 0..<40 {  // the kernel's own limit on links followed in one lookup
            var status = stat()
            if stat(target, &status) == 0 {
                guard let real = realpath(target, nil) else {
                    throw StoreError(
                        .io, "cannot resolve the store path: \(String(cString: strerror(errno)))", store: given)
                }
                defer { free(real) }
                let isDirectory = status.st_mode & S_IFMT == S_IFDIR
                return LMDBLocation(given: given, path: String(cString: real), isDirectory: isDirectory, exists: true)
            }
            guard lstat(target, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { break }
            // A symbolic link to a file that does not exist yet: follow it to where the store goes.
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(target, &buffer, buffer.count - 1)
            guard count >= 0 else {
                throw StoreError(
                    .io, "cannot read the symbolic link \(target): \(String(cString: strerror(errno)))", store: given)
            }
            let destination = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            target = destination.hasPrefix("/") ? destination : Self.directory(of: target) + "/" + destination
        }
        var status = stat()
        if lstat(target, &status) == 0, status.st_mode & S_IFMT == S_IFLNK {
            throw StoreError(.io, "the store path's symbolic links loop; fix the links", store: given)
        }
        let directory = Self.directory(of: target)
        guard let real = realpath(directory, nil) else {
            throw StoreError(
                .notFound,
                "the directory \(directory) for the new store does not exist; create it first, or check the path",
                store: given)
        }
        defer { free(real) }
        let name = (target as NSString).lastPathComponent
        return LMDBLocation(given: given, path: String(cString: real) + "/" + name, isDirectory: false, exists: false)
    }

    private static func directory(of path: String) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        return directory.isEmpty ? "." : directory
    }

    // MARK: Checking the file

    /// LMDB's meta page, as liblmdb 0.9 writes it on 64-bit little-endian machines: a 16-byte page
    /// header (`mp_pgno` u64, `mp_pad` u16, `mp_flags` u16, 4 bytes), then `MDB_meta`.
    enum Meta {
        static let magic: UInt32 = 0xBEEF_C0DE  // MDB_MAGIC
        static let dataVersion: UInt32 = 1  // MDB_DATA_VERSION of release builds
        static let metaFlag: UInt16 = 0x08  // P_META
        static let invalidPage = UInt64.max  // P_INVALID: an empty database's root
        static let flagsOffset = 10
        static let magicOffset = 16
        static let versionOffset = 20
        /// `mm_dbs[0].md_pad`, where LMDB keeps the page size (`mm_psize`).
        static let pageSizeOffset = 40
        /// `md_depth` of `mm_dbs[0]` and `mm_dbs[1]` (u16).
        static let depthOffsets = [46, 94]
        /// `md_root` of `mm_dbs[0]` (free pages) and `mm_dbs[1]` (main database) (u64).
        static let rootOffsets = [80, 128]
        static let lastPageOffset = 136
        static let transactionOffset = 144
        static let size = 152
        /// LMDB's cursor stack (`CURSOR_STACK`): no B-tree is deeper.
        static let maximumDepth: UInt16 = 32
    }

    /// Checks the data file before LMDB maps it: a regular file; empty (LMDB then creates the
    /// environment) or holding two meta pages with LMDB's magic, format version 1, one power-of-two
    /// page size and page numbers 0 and 1; and the newer meta page's last page and B-tree roots
    /// inside the file, its trees no deeper than LMDB's cursors go.
    ///
    /// Fields are read before the file's size, and LMDB writes pages before the meta page that
    /// names them and never shrinks the file, so a commit of another process during the check
    /// cannot make a sound file look damaged.
    ///
    /// - Throws: ``StoreError/Code/corrupt`` naming the store and what is wrong.
    func checkDataFile() throws {
        guard exists else { return }
        let file = dataFile
        let descriptor = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if descriptor < 0 {
            if errno == ENOENT && isDirectory { return }  // LMDB creates data.mdb in the directory
            throw StoreError(
                .io, "cannot read the store file \(file): \(String(cString: strerror(errno))); fix its owner or mode",
                store: given)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw StoreError(
                .io, "cannot read the store file \(file): \(String(cString: strerror(errno)))", store: given)
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw corrupt("\(file) is not a regular file (a directory, device or pipe); check the path")
        }
        guard status.st_size > 0 else { return }
        let first = try read(descriptor, at: 0, count: Meta.size)
        guard first.count == Meta.size, Self.uint32(first, Meta.magicOffset) == Meta.magic else {
            throw corrupt(
                "the file is not an LMDB environment (or one written on a 32-bit or big-endian machine); check the path (it may be a store of another type)"
            )
        }
        let pageSize = Int(Self.uint32(first, Meta.pageSizeOffset))
        guard pageSize >= 512, pageSize <= 65_536, pageSize & (pageSize - 1) == 0 else {
            throw corrupt("its page size is \(pageSize), not a power of two from 512 to 65536")
        }
        let second = try read(descriptor, at: off_t(pageSize), count: Meta.size)
        guard second.count == Meta.size else {
            throw corrupt(
                "the file ends inside its second meta page (\(status.st_size) bytes, pages of \(pageSize)); it was truncated"
            )
        }
        var newest = first
        for (number, page) in [first, second].enumerated() {
            guard Self.uint64(page, 0) == UInt64(number), Self.uint16(page, Meta.flagsOffset) & Meta.metaFlag != 0,
                Self.uint32(page, Meta.magicOffset) == Meta.magic
            else { throw corrupt("meta page \(number) is damaged") }
            let version = Self.uint32(page, Meta.versionOffset)
            guard version == Meta.dataVersion else {
                throw corrupt(
                    "meta page \(number) has LMDB data format \(version); this liblmdb reads format \(Meta.dataVersion)"
                )
            }
            // liblmdb takes the page size from the newer meta page and divides by it.
            let size = Int(Self.uint32(page, Meta.pageSizeOffset))
            guard size == pageSize else {
                throw corrupt("meta page \(number) has page size \(size), meta page 0 \(pageSize)")
            }
            if Self.uint64(page, Meta.transactionOffset) > Self.uint64(newest, Meta.transactionOffset) { newest = page }
        }
        // Read after the meta pages (see above).
        guard fstat(descriptor, &status) == 0 else {
            throw StoreError(
                .io, "cannot read the store file \(file): \(String(cString: strerror(errno)))", store: given)
        }
        let pages = UInt64(status.st_size) / UInt64(pageSize)
        let lastPage = Self.uint64(newest, Meta.lastPageOffset)
        guard lastPage < pages else {
            throw corrupt(
                "its last transaction uses page \(lastPage), but the file holds \(pages) pages of \(pageSize) bytes; it was truncated"
            )
        }
        for (name, (rootOffset, depthOffset)) in zip(["free-page", "main"], zip(Meta.rootOffsets, Meta.depthOffsets)) {
            let root = Self.uint64(newest, rootOffset)
            // Against the file's pages, not `lastPage`: the two are read from one meta page, which
            // another process may be rewriting, while the file's size only grows.
            guard root == Meta.invalidPage || (root >= 2 && root < pages) else {
                throw corrupt("the root of its \(name) tree is page \(root), outside pages 2..<\(pages) of the file")
            }
            let depth = Self.uint16(newest, depthOffset)
            guard depth <= Meta.maximumDepth else { throw corrupt("its \(name) tree claims a depth of \(depth)") }
        }
    }

    private func corrupt(_ what: String) -> StoreError {
        StoreError(
            .corrupt, "the LMDB file is damaged or not one: \(what). Restore the store from a backup", store: given)
    }

    private func read(_ descriptor: Int32, at offset: off_t, count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, offset) }
        guard got >= 0 else {
            throw StoreError(
                .io, "cannot read the store file \(dataFile): \(String(cString: strerror(errno)))", store: given)
        }
        return Array(bytes.prefix(got))
    }

    private static func uint16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    private static func uint32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * UInt32($1)) }
    }

    private static func uint64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
    }
}
