import CLibXML2Bench
import Foundation
import StrataTools

#if canImport(Glibc)
    import Glibc
#endif

/// Memory per object at rest: the resident set after a store holds N objects minus the resident
/// set before, divided by N. Each figure is taken in a child process of its own (so no earlier
/// work's heap is reused), after `malloc_trim(0)` so freed heap goes back to the system before
/// each reading. What is left is what the store keeps: rows, values, strings and indexes.
public enum MemoryAtRest {
    /// The resident set's high-water mark since this program started, in bytes: `VmHWM` of
    /// /proc/self/status, the high-water mark of this process image's own memory.
    ///
    /// Not `getrusage`'s `ru_maxrss`: Linux keeps that across `execve`, so a child process spawned
    /// by a large parent starts with the parent's high-water mark (a walk child of a parent at
    /// 170 MiB reported 165 MiB of growth while its own resident set never passed 60 MiB).
    public static func peakResidentBytes() -> Int64 {
        if let kilobytes = statusKilobytes("VmHWM:") { return kilobytes * 1024 }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Int64(usage.ru_maxrss) * 1024  // kilobytes on Linux
    }

    /// A `kB` field of /proc/self/status (`VmHWM:`, `RssAnon:`, …), or `nil` when unreadable.
    public static func statusKilobytes(_ field: String) -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field) })
        else { return nil }
        return Int64(line.split(separator: " ").dropFirst().first ?? "")
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

    /// The resident set now, in bytes (`/proc/self/statm`), after returning freed heap to the system.
    public static func residentBytes() -> Int64 {
        _ = malloc_trim(0)
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int64(fields[1]) else { return 0 }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The resident set now, in bytes (`/proc/self/statm`), without trimming the heap first.
    public static func residentBytesUntrimmed() -> Int64 {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int64(fields[1]) else { return 0 }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Opens the XML store at `url` (every object loaded) and returns resident bytes per object.
    public static func xml(store url: URL, rows: Int) throws -> Double {
        let before = residentBytes()
        let driver = try XMLSection.open(url)
        let after = residentBytes()
        withExtendedLifetime(driver) {}
        try driver.close()
        return Double(after - before) / Double(max(rows, 1))
    }

    /// Fills an in-memory store with N rows (inserted 1,000 at a time so the batches in flight stay
    /// small, the dataset dropped afterwards so the store's strings are its own) and returns
    /// resident bytes per object.
    public static func inMemory(rows: Int, in directory: URL) throws -> Double {
        guard let contender = try DriverBenchContender(kind: .memory) else {
            throw BenchError("the in-memory driver is not linked")
        }
        try contender.open(in: directory)
        let before = residentBytes()
        do {
            let dataset = BenchDataset(rows: rows, parents: 0)
            var start = 0
            while start < dataset.rows.count {
                let end = min(start + 1_000, dataset.rows.count)
                _ = try contender.insert(dataset.rows[start..<end])
                start = end
            }
        }
        let after = residentBytes()
        try contender.close()
        return Double(after - before) / Double(max(rows, 1))
    }
}
