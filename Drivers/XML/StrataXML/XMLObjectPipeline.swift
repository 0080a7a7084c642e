import Dispatch
import Foundation
import Strata
import Synchronization

// XML OBJECT PIPELINE INVARIANTS
// P1. The scanner (and libxml2's reader inside it) is used by one thread at a time: the producer
//     thread from its start until it signals `finished`; the caller waits for that signal before
//     returning, whatever happened.
// P2. Objects reach the consumer in file order, and the consumer sees every object the scanner
//     read before the scanner's own error, so the error reported is the first in file order, as
//     when one thread does both.
// P3. At most `depth` batches wait between the threads; a consumer that fails cancels the
//     producer, which stops at its next object.

/// Reads an XML store's objects on a second core: one thread runs libxml2's reader and builds
/// the raw objects, the calling thread turns them into rows. Same objects, same order, same first
/// error as reading on one thread (P2).
enum XMLObjectPipeline {
    /// Objects handed over at a time.
    static let batchSize = 512
    /// Batches waiting at most.
    static let depth = 8

    /// Scans like ``XMLDocumentScanner/scan(infoOnly:object:)``, calling `object` on the calling
    /// thread while a second thread reads ahead. The reading thread only copies bytes onto tapes
    /// (``XMLObjectTape``); strings are made here.
    static func scan(_ scanner: XMLDocumentScanner, object: (XMLRawObject) throws -> Void) throws -> XMLDatabaseInfo {
        let channel = Channel()
        let reader = ScannerBox(scanner)
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            var tape = XMLObjectTape()
            let outcome = Result {
                try reader.scanner.scan(into: &tape, batch: batchSize) { full in
                    guard channel.send(full) else { throw Cancelled() }
                    full = XMLObjectTape()
                }
            }
            // What was read before an error still goes to the consumer first (P2).
            if tape.count > 0 { _ = channel.send(tape) }
            channel.finish(outcome)
            finished.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()
        defer { finished.wait() }  // P1
        while true {
            switch channel.receive() {
            case .batch(let tape):
                do {
                    for index in 0..<tape.count { try object(tape.object(index)) }
                } catch {
                    channel.cancel()
                    throw error
                }
            case .end(let outcome):
                return try outcome.get()
            }
        }
    }

    private struct Cancelled: Error {}

    /// The scanner, moved to the producer thread.
    ///
    /// `@unchecked Sendable`: only the producer thread touches it, and the caller does not return
    /// before that thread is done (P1).
    private final class ScannerBox: @unchecked Sendable {  // safe: one thread at a time (P1)
        let scanner: XMLDocumentScanner
        init(_ scanner: XMLDocumentScanner) { self.scanner = scanner }
    }

    /// A bounded queue of batches, then the scan's outcome.
    private final class Channel: Sendable {
        enum Item {
            case batch(XMLObjectTape)
            case end(Result<XMLDatabaseInfo, any Error>)
        }

        private struct State {
            var batches: [XMLObjectTape] = []
            var end: Result<XMLDatabaseInfo, any Error>?
            var cancelled = false
        }

        private let state = Locked(State())
        private let available = DispatchSemaphore(value: 0)
        private let space = DispatchSemaphore(value: 0)

        init() {
            // Started at zero and raised: libdispatch traps when a semaphore is released below
            // the value it was created with, which a cancelled scan leaves it at.
            for _ in 0..<XMLObjectPipeline.depth { space.signal() }
        }

        /// Queues a batch, waiting for room (P3); `false` once the consumer cancelled.
        func send(_ batch: XMLObjectTape) -> Bool {
            space.wait()
            let queued = state.withLock { state -> Bool in
                guard !state.cancelled else { return false }
                state.batches.append(batch)
                return true
            }
            if queued { available.signal() } else { space.signal() }
            return queued
        }

        /// The scan is over.
        func finish(_ outcome: Result<XMLDatabaseInfo, any Error>) {
            state.withLock { $0.end = outcome }
            available.signal()
        }

        /// The next batch, or the outcome once every batch was received.
        func receive() -> Item {
            available.wait()
            return state.withLock { state -> Item in
                if !state.batches.isEmpty {
                    space.signal()
                    return .batch(state.batches.removeFirst())
                }
                // `finish` signalled after the last batch, so the outcome is set.
                return .end(state.end!)
            }
        }

        /// Stops the producer at its next batch.
        func cancel() {
            state.withLock { $0.cancelled = true }
            space.signal()
        }
    }
}
