import Foundation
import Testing

@testable import Strata

/// ``ReadWriteLocked``: readers share the lock, a writer has it alone, and readers never see a
/// change half made. `scripts/sanitize.sh thread` runs this suite under ThreadSanitizer.
@Suite("Reader–writer lock")
struct ReadWriteLockedTests {
    struct Pair {
        var first = 0
        var second = 0
    }

    @Test("two readers and two writers on four threads: every read sees both halves of a change or neither")
    func readersAndWriters() {
        let locked = ReadWriteLocked(Pair())
        let reads = 20_000
        let writes = 5_000
        let torn = Locked(0)
        let seen = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            if worker < 2 {
                var local = 0
                var largest = 0
                for _ in 0..<reads {
                    let (first, second) = locked.withReadLock { pair in (pair.first, pair.second) }
                    if first != second { local += 1 }
                    largest = max(largest, first)
                }
                torn.withLock { $0 += local }
                seen.withLock { $0 = max($0, largest) }
            } else {
                for _ in 0..<writes {
                    locked.withLock { pair in
                        pair.first += 1
                        pair.second += 1
                    }
                }
            }
        }
        print("reader–writer lock: 2 readers × \(reads) reads, 2 writers × \(writes) writes")
        #expect(torn.withLock { $0 } == 0)
        let final = locked.withReadLock { pair in (pair.first, pair.second) }
        #expect(final.0 == 2 * writes && final.1 == 2 * writes)
        #expect(seen.withLock { $0 } <= 2 * writes)
    }

    @Test("a value behind the lock is released with it")
    func releasesValue() {
        final class Token: Sendable {}
        weak var weakToken: Token?
        do {
            let token = Token()
            weakToken = token
            let locked = ReadWriteLocked([token])
            #expect(locked.withReadLock { $0.count } == 1)
        }
        #expect(weakToken == nil)
    }
}
