import Dispatch
import Foundation
import Strata
import Synchronization

extension XMLStoreEncoder {
    /// Rows encoded per piece of work.
    static let chunkRows = 4_096

    /// Writes the `<object>` elements in file order. Large stores are encoded a window of chunks at
    /// a time, the chunks of a window on every core at once, each into memory of its own, then
    /// appended to `writer` in order: the bytes are exactly those of one pass, and memory stays
    /// bounded by one window.
    func writeObjects(
        _ rows: [RowSnapshot], order: [Int], ids: ObjectIDs, store: String, to writer: inout XMLByteWriter, cores: Int
    ) throws {
        guard cores > 1, order.count >= 2 * Self.chunkRows else {
            return try writeRun(rows, order: order[...], ids: ids, store: store, to: &writer)
        }
        let chunks = stride(from: 0, to: order.count, by: Self.chunkRows).map { $0..<min($0 + Self.chunkRows, order.count) }
        let windowSize = 2 * cores
        for windowStart in stride(from: 0, to: chunks.count, by: windowSize) {
            let window = Array(chunks[windowStart..<min(windowStart + windowSize, chunks.count)])
            let outputs = window.map { _ in EncodedChunk() }
            let failure = Mutex<(any Error)?>(nil)
            DispatchQueue.concurrentPerform(iterations: window.count) { index in
                var chunkWriter = XMLByteWriter(capacity: Self.chunkRows * 512)
                do {
                    try writeRun(rows, order: order[window[index]], ids: ids, store: store, to: &chunkWriter)
                    outputs[index].writer = chunkWriter
                } catch {
                    failure.withLock { if $0 == nil { $0 = error } }
                }
            }
            if let error = failure.withLock({ $0 }) { throw error }
            for output in outputs {
                // Every iteration above set its output before concurrentPerform returned.
                try writer.append(contentsOf: output.writer!)
            }
        }
    }
}

/// One chunk's bytes, handed from the iteration that encoded them to the writer.
///
/// `@unchecked Sendable`: each instance is written by exactly one iteration of
/// `concurrentPerform` and read only after `concurrentPerform` has returned, which orders the
/// write before the read; nothing else touches it.
private final class EncodedChunk: @unchecked Sendable {
    var writer: XMLByteWriter?
}
