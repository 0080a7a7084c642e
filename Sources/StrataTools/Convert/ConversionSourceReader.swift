import Foundation
import Strata

/// Reads the source of a conversion on a thread of its own, up to two batches ahead of the writer,
/// and digests each batch there: reading and digesting the source overlap with writing the copy.
///
/// The reader thread is the only user of the source driver from ``start()`` until the thread ends
/// (``next()`` returned ``Item/finished`` or ``Item/failed(_:)``, or ``stop()`` returned).
///
/// Thread safety: `@unchecked Sendable`: the queue and the stop flag are read and written only
/// with `condition` locked; everything else is set in `init` and never changes.
final class ConversionSourceReader: @unchecked Sendable {
    /// What the reader hands over, in order.
    enum Item {
        /// A batch of rows of `entities[index]`, in key order.
        case rows(index: Int, [RowSnapshot])
        /// Every row of `entities[index]` was handed over; its digest.
        case entityDone(index: Int, ContentDigest)
        /// Every entity was read.
        case finished
        /// Reading failed (the error names the source); nothing follows.
        case failed(any Error)
    }

    private struct Stopped: Error {}

    private let driver: any StoreDriver
    private let entities: [EntityDescription]
    private let model: ManagedObjectModel
    private let batchSize: Int
    private let source: StoreLocation
    private let capacity = 2
    private let condition = NSCondition()
    private var queue: [Item] = []
    private var stopped = false
    private let ended = DispatchSemaphore(value: 0)

    /// A reader of `entities` from `driver` (the store at `source`), `batchSize` rows at a time.
    init(
        driver: any StoreDriver, entities: [EntityDescription], model: ManagedObjectModel, batchSize: Int,
        source: StoreLocation
    ) {
        self.driver = driver
        self.entities = entities
        self.model = model
        self.batchSize = batchSize
        self.source = source
    }

    /// Starts the reader thread.
    func start() {
        let thread = Thread { [self] in
            run()
            ended.signal()
        }
        thread.name = "strata convert: reading \(source.displayName)"
        thread.start()
    }

    /// The next item, waiting for it.
    func next() -> Item {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty { condition.wait() }
        let item = queue.removeFirst()
        condition.broadcast()
        return item
    }

    /// Waits for the reader thread to end, after ``Item/finished`` or ``Item/failed(_:)``.
    func wait() { ended.wait() }

    /// Stops the reader (it drops what it read) and waits for its thread to end.
    func stop() {
        condition.lock()
        stopped = true
        queue.removeAll()
        condition.broadcast()
        condition.unlock()
        ended.wait()
    }

    private func run() {
        do {
            for (index, entity) in entities.enumerated() {
                var digest = ContentDigest(entity: entity, model: model)
                try StoreConverter.read(source) {
                    try driver.scanRows(RowScan(entity: entity, batchSize: batchSize)) { rows in
                        digest.add(rows)
                        guard put(.rows(index: index, rows)) else { throw Stopped() }
                    }
                }
                guard put(.entityDone(index: index, digest)) else { return }
            }
            _ = put(.finished)
        } catch is Stopped {
            return
        } catch {
            _ = put(.failed(error), waiting: false)
        }
    }

    /// Queues `item`, waiting while the queue is full (unless `waiting` is false); `false` when
    /// the reader was stopped.
    private func put(_ item: Item, waiting: Bool = true) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while waiting, !stopped, queue.count >= capacity { condition.wait() }
        guard !stopped else { return false }
        queue.append(item)
        condition.broadcast()
        return true
    }
}
