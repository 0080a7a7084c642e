internal import CStrataPrefetch
import Foundation

/// How much machine stack the current thread has left, for recursive descent over input from
/// outside (the predicate parser).
///
/// A fixed depth limit alone does not keep a parser off the end of the stack: frames are several
/// times larger in debug and sanitizer builds, and threads other than the main one have smaller
/// stacks (a 256-level predicate overflowed a test thread's stack under AddressSanitizer). The
/// parser therefore also stops, with the same `tooDeep` error, when less than ``margin`` bytes of
/// the thread's stack remain.
enum StackRoom {
    /// Stack kept free below the deepest level the parser enters: room for the frames one more
    /// level and its leaf work take in the largest (sanitizer) builds.
    static let margin: UInt = 128 * 1024

    /// The lowest frame address at which recursion may still go deeper on this thread, or `nil`
    /// when the stack's bounds cannot be read (then only the depth limit applies).
    static func floor() -> UInt? {
        var low: UInt = 0
        var size: UInt = 0
        guard strata_stack_bounds(&low, &size) == 0, size > 0 else { return nil }
        let (limit, overflow) = low.addingReportingOverflow(margin)
        return overflow ? nil : limit
    }

    /// The current frame's address (stacks grow down: deeper frames have lower addresses).
    @inline(__always) static func current() -> UInt { UInt(bitPattern: strata_frame_address()) }
}
