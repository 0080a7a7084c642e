import Foundation
import Strata
import Testing

@Suite("Folding change sets")
struct ChangeSetFoldTests {
    private let a = RowID(entity: 1, primaryKey: 1)
    private let b = RowID(entity: 1, primaryKey: 2)
    private let stored = RowID(entity: 1, primaryKey: 9)

    private func batch(
        inserts: [RowSnapshot] = [], updates: [RowUpdate] = [], deletes: [RowDelete] = []
    ) -> ChangeBatch {
        var batch = ChangeBatch()
        batch.inserts = inserts
        batch.updates = updates
        batch.deletes = deletes
        batch.durability = .deferred
        return batch
    }

    @Test("an insert takes the later updates' values; an insert deleted later is left out")
    func insertsAbsorbChanges() throws {
        var fold = ChangeSetFold()
        try fold.add(
            batch(inserts: [
                RowSnapshot(id: a, version: 1, values: [.string("a"), .integer(1)]),
                RowSnapshot(id: b, version: 1, values: [.string("b"), .integer(2)]),
            ]))
        try fold.add(
            batch(updates: [
                RowUpdate(id: a, expectedVersion: 1, values: [.string("x"), .integer(7)], changedSlots: [1])
            ]))
        try fold.add(
            batch(
                updates: [
                    RowUpdate(id: a, expectedVersion: 2, values: [.string("y"), .integer(7)], changedSlots: [0])
                ],
                deletes: [RowDelete(id: b, expectedVersion: 1)]))
        let whole = fold.result()
        #expect(whole.inserts == [RowSnapshot(id: a, version: 1, values: [.string("y"), .integer(7)])])
        #expect(whole.updates.isEmpty && whole.deletes.isEmpty)
        #expect(whole.durability == .immediate)
    }

    @Test("updates of a stored row merge their slots against the first expected version; a delete after them keeps it")
    func storedRows() throws {
        var fold = ChangeSetFold()
        try fold.add(
            batch(updates: [
                RowUpdate(id: stored, expectedVersion: 5, values: [.string("p"), .integer(1)], changedSlots: [0])
            ]))
        try fold.add(
            batch(updates: [
                RowUpdate(id: stored, expectedVersion: 6, values: [.string("q"), .integer(2)], changedSlots: [1])
            ]))
        var whole = fold.result()
        #expect(
            whole.updates == [
                RowUpdate(id: stored, expectedVersion: 5, values: [.string("p"), .integer(2)], changedSlots: [0, 1])
            ])
        try fold.add(batch(deletes: [RowDelete(id: stored, expectedVersion: 7)]))
        whole = fold.result()
        #expect(whole.updates.isEmpty)
        #expect(whole.deletes == [RowDelete(id: stored, expectedVersion: 5)])
    }

    @Test("a change expecting a version the earlier change sets do not leave is a conflict")
    func staleVersions() throws {
        var fold = ChangeSetFold()
        try fold.add(batch(inserts: [RowSnapshot(id: a, version: 1, values: [.null])]))
        let insertedThenStale = #expect(throws: StoreError.self) {
            try fold.add(batch(updates: [RowUpdate(id: a, expectedVersion: 3, values: [.null], changedSlots: [0])]))
        }
        #expect(insertedThenStale?.code == .conflict)
        try fold.add(batch(updates: [RowUpdate(id: stored, expectedVersion: 2, values: [.null], changedSlots: [0])]))
        let updatedThenStale = #expect(throws: StoreError.self) {
            try fold.add(batch(deletes: [RowDelete(id: stored, expectedVersion: 2)]))
        }
        #expect(updatedThenStale?.code == .conflict)
        let wrongWidth = #expect(throws: StoreError.self) {
            try fold.add(
                batch(updates: [RowUpdate(id: a, expectedVersion: 1, values: [.null, .null], changedSlots: [1])]))
        }
        #expect(wrongWidth?.code == .invalidRequest)
    }
}
