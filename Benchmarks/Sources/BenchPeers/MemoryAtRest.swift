import CLibXML2Bench  // malloc_trim (its shim includes malloc.h)
import Foundation
import Strata
import StrataTools

#if canImport(Glibc)
    import Glibc
#endif

/// The memory figures, each taken in a child process of its own that does nothing else, so no
/// other work's heap is counted or reused:
///
/// - objects at rest (``objects(_:rows:in:)``): resident growth ÷ objects while a context holds N
///   fetched objects with every attribute read (DESIGN: at most 400 bytes per live object);
/// - peak growth over W1 and W2 (``peakGrowth(_:dataset:in:)``): the high-water mark of the
///   resident set while a contender inserts N rows and fetches them back, over the resident set
///   before it opened its store with the dataset already generated;
/// - the XML store alone (``xml(store:rows:)``): the XML driver's resident growth ÷ rows when it
///   opens a store of N rows (it loads every row at open), for the XML section.
///
/// Readings are taken after `malloc_trim(0)`, so heap already freed is returned to the system first.
public enum MemoryAtRest {
    /// A reading of the resident set (`/proc/self/status`).
    public struct Resident: Sendable {
        /// `VmRSS`: every resident page, the mapped pages of store files (LMDB's map) included.
        public var total: Int64
        /// `RssAnon`: the anonymous part (heap and stacks), without mapped files.
        public var anonymous: Int64
    }

    /// The resident set now, after returning freed heap to the system.
    public static func resident() -> Resident {
        _ = malloc_trim(0)
        let status = statusFields()
        return Resident(total: status["VmRSS"] ?? 0, anonymous: status["RssAnon"] ?? 0)
    }

    /// The resident set now, in bytes, after returning freed heap to the system.
    public static func residentBytes() -> Int64 { resident().total }

    /// This process's own resident-set high-water mark, in bytes: `VmHWM` of /proc/self/status.
    ///
    /// Not `getrusage`'s `ru_maxrss`: on Linux, `execve` folds the high-water mark of the memory
    /// it replaces into the new program's `ru_maxrss`, and a child started by `posix_spawn` (as
    /// `Process` starts one) replaces its parent's memory, which it shares until then; fork then
    /// exec does the same with the parent's copied pages. So a child's `ru_maxrss` is at least the
    /// parent's resident set when it was started: every child of the benchmarks read about 90 MiB,
    /// whatever it did. `VmHWM` is the high-water mark of the child's own address space, which
    /// starts empty at `execve`. Falls back to `ru_maxrss` where /proc is not there.
    public static func peakResidentBytes() -> Int64 {
        if let peak = statusFields()["VmHWM"] { return peak }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Int64(usage.ru_maxrss) * 1024  // kilobytes on Linux
    }

    /// Resets the process's resident-set high-water mark (`VmHWM`) to its resident set now, by
    /// writing 5 to `/proc/self/clear_refs` (Linux 4.0 and later).
    ///
    /// - Throws: ``BenchError`` when the kernel refuses.
    public static func resetPeak() throws {
        _ = malloc_trim(0)
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { throw BenchError("cannot open /proc/self/clear_refs to reset the peak resident set") }
        defer { close(fd) }
        guard write(fd, "5", 1) == 1 else { throw BenchError("the kernel refused to reset the peak resident set") }
    }

    /// A `kB` field of /proc/self/status (`VmHWM`, `RssAnon`, …) in kilobytes, or `nil` when
    /// unreadable.
    public static func statusKilobytes(_ field: String) -> Int64? {
        statusFields()[field.hasSuffix(":") ? String(field.dropLast()) : field].map { $0 / 1024 }
    }

    /// The resident bytes of the memory maps of the file at `path` (`Rss` of its mappings in
    /// /proc/self/smaps): for LMDB, the pages of the store file its memory map made resident.
    public static func mappedResidentBytes(of path: String) -> Int64 {
        // Read to the end in a loop: /proc files report no size, and a one-shot read of a large
        // smaps stops short.
        guard let data = FileHandle(forReadingAtPath: "/proc/self/smaps")?.readDataToEndOfFile() else { return 0 }
        let text = String(decoding: data, as: UTF8.self)
        var total: Int64 = 0
        var inFile = false
        for line in text.split(separator: "\n") {
            if let first = line.first, first.isHexDigit, line.contains("-") {
                // A mapping's header: address range, permissions, offset, device, inode, path.
                inFile = line.hasSuffix(" " + path) || line.hasSuffix("\t" + path)
            } else if inFile, line.hasPrefix("Rss:") {
                total += (Int64(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
            }
        }
        return total
    }

    /// The resident set now, in bytes (`/proc/self/statm`), without trimming the heap first.
    public static func residentBytesUntrimmed() -> Int64 {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int64(fields[1]) else { return 0 }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The resident set's high-water mark since the last ``resetPeak()`` (`VmHWM`), in bytes.
    public static func peakBytes() -> Int64 { statusFields()["VmHWM"] ?? 0 }

    /// The `kB` fields of `/proc/self/status`, in bytes.
    private static func statusFields() -> [String: Int64] {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return [:] }
        var fields: [String: Int64] = [:]
        for line in text.split(separator: "\n") where line.hasSuffix(" kB") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let kB = Int64(parts[1].dropLast(3).trimmingCharacters(in: .whitespaces)) else {
                continue
            }
            fields[String(parts[0])] = kB * 1024
        }
        return fields
    }

    /// Objects at rest on one driver.
    public struct Objects: Codable, Sendable {
        /// Objects held.
        public var objects: Int
        /// Resident growth ÷ objects, in bytes.
        public var bytesPerObject: Double
        /// The anonymous part of the growth ÷ objects (heap: objects, values, row cache, engine caches).
        public var anonymousBytesPerObject: Double
    }

    /// Builds a store of `rows` items with `kind`'s driver (``SectionStore/build(_:rows:in:)``:
    /// reopened, nothing cached), reads the resident set, fetches every item into a new context
    /// reading every attribute, and reads the resident set again with the context and its objects
    /// alive. The growth is what the objects cost at rest: objects, their values, the context's
    /// registrations, the row cache's snapshots, and what the engine keeps for having read them
    /// (SQLite's page cache, LMDB's mapped pages, which `total` counts and `anonymous` does not).
    public static func objects(_ kind: KnownDriver, rows: Int, in directory: URL) throws -> Objects {
        let store = try SectionStore.build(kind, rows: rows, in: directory)
        defer { try? store.close() }
        // A fetch of a few items, dropped before the first reading, so the code of a fetch is
        // resident by then (its pages would otherwise count as the objects' growth).
        do {
            var request = FetchRequest(entityName: "Item")
            request.fetchLimit = 100
            request.returnsObjectsAsFaults = false
            let context = ManagedObjectContext(coordinator: store.coordinator)
            for item in try context.fetch(request) { _ = SectionStore.checksum(item) }
        }
        let before = resident()
        let context = ManagedObjectContext(coordinator: store.coordinator)
        let items = try store.fetchAll(in: context)
        let after = resident()
        withExtendedLifetime((context, items)) {}
        let n = Double(max(items.count, 1))
        return Objects(
            objects: items.count, bytesPerObject: Double(after.total - before.total) / n,
            anonymousBytesPerObject: Double(after.anonymous - before.anonymous) / n)
    }

    /// The high-water mark of the resident set over W1 (insert `dataset`'s N rows, save) and W2
    /// (fetch them back, every attribute read) on a new store of `contender`, minus the resident
    /// set before the store was opened, with the dataset already generated; in bytes.
    ///
    /// - Throws: ``BenchError`` when W1 or W2 touched the wrong rows, or the peak cannot be reset.
    public static func peakGrowth(_ contender: any BenchContender, dataset: BenchDataset, in directory: URL) throws
        -> Int64
    {
        try resetPeak()
        let base = resident().total
        try contender.open(in: directory)
        let inserted = try contender.insert(dataset.rows[...])
        let fetched = try contender.fetchAll()
        let peak = peakBytes()
        try contender.close()
        guard inserted.rows == dataset.rows.count, fetched == dataset.expectedFetchAll else {
            throw BenchError(
                "\(contender.id): W1 inserted \(inserted.rows) rows and W2 read \(fetched.rows) (checksum \(fetched.checksum)), expected \(dataset.rows.count) (checksum \(dataset.expectedFetchAll.checksum))"
            )
        }
        return peak - base
    }

    /// Opens the XML store at `url` with the XML driver alone (every row loaded) and returns its
    /// resident growth per row.
    public static func xml(store url: URL, rows: Int) throws -> Double {
        let before = residentBytes()
        let driver = try XMLSection.open(url)
        let after = residentBytes()
        withExtendedLifetime(driver) {}
        try driver.close()
        return Double(after - before) / Double(max(rows, 1))
    }
}
