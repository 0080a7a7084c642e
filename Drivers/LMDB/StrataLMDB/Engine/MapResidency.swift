import CLMDB
import Foundation
import Synchronization

/// What one read-only transaction has read through the memory map since it began or last
/// reported to the environment's ``MapResidency``: the span of pages its values lay on and how
/// many 64 KiB windows of the map it entered.
///
/// Every value a read-only transaction returns lies in the map (see ``MappedPages`` for why), so
/// the span never reaches other memory. Keys are not noted: a key buffer may be the caller's.
///
/// Thread safety: a value type owned by one transaction, which one thread uses at a time.
struct MapReads {
    /// The kernel maps the pages around a faulting one too (fault-around, 64 KiB aligned), so a
    /// window entered counts as 64 KiB resident.
    static let window: UInt = 64 << 10
    /// Windows entered before a transaction reports to the environment in the middle of a long
    /// read (a scan of a whole store), so the limit holds within one transaction too.
    static let reportEvery = 16

    /// The map generation the addresses belong to (``LMDBEnvironment/mapGeneration``).
    let generation: Int
    /// The lowest page start and the highest page end noted (`low >= high`: nothing noted).
    private var low = UInt.max
    private var high: UInt = 0
    /// Windows entered; a window left and entered again counts again (an upper bound).
    private(set) var windows = 0
    private var lastWindow = UInt.max

    init(generation: Int) { self.generation = generation }

    /// The whole pages from the lowest to the highest noted; `nil` before the first value.
    var span: Range<UInt>? { low < high ? low..<high : nil }

    /// Notes the pages `value` lies on; `true` when enough windows were entered to report now.
    @inline(__always)
    mutating func note(_ value: UnsafeRawBufferPointer) -> Bool {
        guard let base = value.baseAddress, value.count > 0 else { return false }
        let start = UInt(bitPattern: base)
        let end = start + UInt(value.count)
        let mask = MappedPages.pageSize - 1
        // Whole pages of the value only: a wider rounding could reach past the map.
        low = min(low, start & ~mask)
        high = max(high, (end + mask) & ~mask)
        let first = start / Self.window
        let last = (end - 1) / Self.window
        if first == lastWindow, last == lastWindow { return false }
        windows += Int(last - first) + (first == lastWindow ? 0 : 1)
        lastWindow = last
        return windows >= Self.reportEvery
    }

    /// Adds what `other`, of the same generation, read.
    mutating func merge(_ other: MapReads) {
        guard other.low < other.high else { return }
        windows += other.windows
        low = min(low, other.low)
        high = max(high, other.high)
    }

    /// Forgets what was read (after reporting it); the last window is kept, so a scan going on
    /// in the same window does not count it again.
    mutating func clear() {
        low = .max
        high = 0
        windows = 0
    }
}

/// Keeps the part of an environment's memory map resident in this process under a limit
/// (``LMDBOptions/residentMapLimit``).
///
/// Why: LMDB reads the file through one `mmap`, and every page a read touches stays in the
/// process's resident set until the map is closed, so reading a store larger than memory budgets
/// (a batched walk of every row, a scan of IDs) grows the resident set with the file. The pages
/// are the kernel's page cache, but a process's resident set counts them, and so do the limits
/// containers and schedulers enforce.
///
/// How: read-only transactions note the pages their values lay on (``MapReads``) and report them
/// here at their end and every few windows in between. The part of the map read since the last
/// drop is at most the smaller of the span of those pages and the windows entered; when it passes
/// the limit, every page between the lowest and the highest ever reported is dropped with
/// `madvise(MADV_DONTNEED)`, which on this shared,
/// read-only file mapping only removes this process's page table entries: the data stays in the
/// file and the page cache, and the next access faults the same page back in (see
/// ``MappedPages`` for why that is safe, and why the map cannot move while a transaction is
/// open). A store smaller than the limit is never dropped, whatever the access pattern; a larger
/// one read at random is, and pays a minor page fault per window read again afterwards.
///
/// Thread safety: the running totals sit behind a `Mutex`; a report is called inside a
/// transaction (the environment's gate held shared, so the map does not move).
final class MapResidency: Sendable {
    /// The limit in bytes.
    let limit: UInt
    private let state = Mutex<State?>(nil)

    /// What the map's readers reported, for one map generation.
    private struct State {
        /// Read since the last drop.
        var recent: MapReads
        /// Every page any report covered since the map was set: what a drop gives back. The pages
        /// no value lies on (LMDB's branch pages, touched by every lookup, and the pages the kernel
        /// maps around them) lie between the pages values lie on, so a drop of this extent takes
        /// them too; pages dropped before and not read since cost the drop nothing.
        var extent: MapReads
    }

    init(limit: Int) { self.limit = UInt(limit) }

    /// Takes what a transaction read, clears it, and drops every page read through the map when
    /// what was read since the last drop may hold more than the limit.
    func report(_ reads: inout MapReads) {
        guard reads.span != nil else { return }
        let drop: Range<UInt>? = state.withLock { state in
            // A state of another map generation is of a map that no longer exists at its address.
            var current =
                state?.recent.generation == reads.generation
                ? state!
                : State(recent: MapReads(generation: reads.generation), extent: MapReads(generation: reads.generation))
            current.recent.merge(reads)
            current.extent.merge(reads)
            state = current
            guard let span = current.recent.span else { return nil }
            let resident = min(UInt(span.count), UInt(current.recent.windows) * MapReads.window)
            guard resident > limit else { return nil }
            state?.recent = MapReads(generation: reads.generation)
            return current.extent.span
        }
        reads.clear()
        guard let drop else { return }
        // A failure leaves the pages resident, which costs memory and changes nothing stored or
        // returned: the read goes on.
        _ = madvise(UnsafeMutableRawPointer(bitPattern: drop.lowerBound), Int(drop.count), MADV_DONTNEED)
    }
}
