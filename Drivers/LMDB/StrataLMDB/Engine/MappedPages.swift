import CLMDB
import Foundation

/// The part of an LMDB memory map a scan has read values from, to be dropped from this process's
/// resident set once they are decoded (``LMDBTransaction/release(_:)``).
///
/// Why: a scan that reads a whole store once (a copying migration, a conversion) touches every
/// page of the file through the map, and each touched page stays in the process's resident set
/// until the map is closed, so the resident set grows with the store. The heap stays flat; the
/// growth is the map's pages (see docs/benchmarks.md, "Migration section").
///
/// What is dropped: the span from the lowest to the highest page any value of the scan lay on,
/// not only those pages. A page fault maps the pages around the faulting one too (the kernel's
/// fault-around, 64 KiB), so pages dropped after an earlier batch come back when the next batch
/// faults its first page; only dropping the whole span read so far keeps them out.
///
/// Why it is safe (LMDB 0.9, `mdb.c`):
/// - In a read-only transaction (and the driver never opens `MDB_WRITEMAP` environments),
///   `mdb_page_get` returns `env->me_map + psize * pgno`, never a copy; `mdb_node_read` returns a
///   value inside its leaf page, or, for a value on overflow pages (`F_BIGDATA`), the overflow
///   pages' data, again inside the map. So every value a read transaction returns lies in the
///   map, never in memory LMDB or the driver allocated. Only values are noted, never keys: a key
///   buffer may be the caller's own seek key.
/// - The map is one `mmap` of the file, so every address between two addresses in it is in it
///   too: the span never reaches other memory. Spans are kept per map generation
///   (``LMDBEnvironment/mapGeneration``): when the map was set anew between two batches (grown by
///   this process, or adopted after another grew it), LMDB may have moved it, and the span starts
///   again. Within a transaction the map cannot move (``LMDBEnvironment`` rule E2).
/// - The map is a `MAP_SHARED` read-only mapping of the file (LMDB writes with `pwrite` without
///   `MDB_WRITEMAP`). `madvise(MADV_DONTNEED)` on such a mapping only removes this process's page
///   table entries; the data stays in the file and the page cache, and the next access (by this
///   scan or any other reader of the map) faults the same page back in. Nothing is written,
///   nothing is lost.
///
/// Thread safety: a value type, used by one scan.
struct MappedPages {
    /// The system's page size (LMDB's page size is the same; `madvise` works on these).
    static let pageSize = UInt(max(sysconf(Int32(_SC_PAGESIZE)), 4096))

    /// The pages from the lowest to the highest noted, whole pages; `nil` before the first value.
    private(set) var span: Range<UInt>?
    /// The map generation the span's addresses belong to.
    private(set) var generation = 0

    /// Starts a batch read in a transaction of a map of `generation`: a span of an earlier map
    /// is forgotten.
    mutating func begin(generation current: Int) {
        if current != generation { span = nil }
        generation = current
    }

    /// Notes the pages `value`, a value a read-only transaction returned, lies on.
    mutating func note(value: UnsafeRawBufferPointer) {
        guard let base = value.baseAddress, value.count > 0 else { return }
        let mask = Self.pageSize - 1
        let address = UInt(bitPattern: base)
        let pages = (address & ~mask)..<((address + UInt(value.count) + mask) & ~mask)
        if let known = span {
            span = min(known.lowerBound, pages.lowerBound)..<max(known.upperBound, pages.upperBound)
        } else {
            span = pages
        }
    }
}

extension LMDBTransaction {
    /// Drops the span of `pages` from this process's resident set (see ``MappedPages``). Call it
    /// in a read-only transaction of the map the span was noted in; it does nothing in a write
    /// transaction, whose values may lie in pages LMDB allocated.
    func release(_ pages: MappedPages) {
        guard isReadOnly, let span = pages.span, pages.generation == environment.mapGeneration else { return }
        // A failure leaves the pages resident, which costs memory and changes nothing stored, so
        // there is nothing to report: the scan goes on.
        _ = madvise(UnsafeMutableRawPointer(bitPattern: span.lowerBound), Int(span.count), MADV_DONTNEED)
    }
}
