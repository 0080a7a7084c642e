import Foundation
import Strata

// StoreDriver.apply(inParts:): several change sets applied as one, each seeing the ones before it.

extension ConformanceSuite {
    static var applyInPartsCases: [ConformanceCase] {
        [
            ConformanceCase(
                "change sets applied in parts land together; later ones update and delete rows earlier ones inserted"
            ) { harness in
                let fixture = try Fixture(harness, seeded: false)
                let driver = fixture.store.driver
                let playlist = entity("Playlist")
                let chapter = entity("Chapter")
                let track = entity("Track")
                let p = RowID(entity: playlist.entityNumber, primaryKey: try key(driver, playlist))
                let chapters = try (0..<3).map { _ in
                    RowID(entity: chapter.entityNumber, primaryKey: try key(driver, chapter))
                }
                let tracks = try (0..<2).map { _ in
                    RowID(entity: track.entityNumber, primaryKey: try key(driver, track))
                }
                let chaptersSlot = playlist.index(ofProperty: "chapters")!  // in the model
                let titleSlot = track.index(ofProperty: "title")!  // in the model
                var playlistValues = row(playlist, ["title": .string("mix")])
                playlistValues[chaptersSlot] = .references(chapters)
                var parts: [ChangeBatch] = []
                // The owner of an ordered relationship comes before its members.
                var one = ChangeBatch()
                one.inserts = [RowSnapshot(id: p, version: 1, values: playlistValues)]
                parts.append(one)
                var two = ChangeBatch()
                two.inserts =
                    chapters.enumerated().map { index, id in
                        RowSnapshot(
                            id: id, version: 1,
                            values: row(chapter, ["title": .string("c\(index)"), "playlist": .reference(p)]))
                    }
                    + tracks.enumerated().map { index, id in
                        RowSnapshot(id: id, version: 1, values: row(track, ["title": .string("t\(index)")]))
                    }
                parts.append(two)
                // The order restated once the members exist; a track renamed, then renamed again.
                var three = ChangeBatch()
                playlistValues[chaptersSlot] = .references([chapters[2], chapters[0], chapters[1]])
                three.updates = [
                    RowUpdate(id: p, expectedVersion: 1, values: playlistValues, changedSlots: [chaptersSlot]),
                    RowUpdate(
                        id: tracks[0], expectedVersion: 1, values: row(track, ["title": .string("renamed")]),
                        changedSlots: [titleSlot]),
                ]
                parts.append(three)
                var four = ChangeBatch()
                four.updates = [
                    RowUpdate(
                        id: tracks[0], expectedVersion: 2, values: row(track, ["title": .string("renamed twice")]),
                        changedSlots: [titleSlot])
                ]
                four.deletes = [RowDelete(id: tracks[1], expectedVersion: 1)]
                parts.append(four)
                let replay = ChangeSetReplay(parts)
                _ = try driver.apply(inParts: replay.next)
                try require(replay.starts >= 1, "next(true) was called (\(replay.starts) times)")
                func check(_ context: ManagedObjectContext, _ when: String) throws {
                    let lists = try fetch(context, "Playlist")
                    try requireEqual(lists.count, 1, "playlists \(when)")
                    let members = try requireValue(lists[0].value(forKey: "chapters") as? [ManagedObject], "chapters")
                    try requireEqual(names(members, "title"), ["c2", "c0", "c1"], "chapter order \(when)")
                    try requireEqual(
                        names(try fetch(context, "Track"), "title"), ["renamed twice"], "tracks \(when)")
                }
                try check(fixture.context(), "after the parts")
                // Keys handed out later are above the ones the parts inserted.
                let later = try driver.allocatePrimaryKeys(forEntity: track.entityNumber, count: 1)
                try require(later.lowerBound > tracks[1].primaryKey, "a later key (\(later)) is above \(tracks)")
                let (_, reopened) = try fixture.reopen()
                try check(reopened, "after reopening")
            },
            ConformanceCase("a failure in any part of a change in parts leaves the store exactly as it was") {
                harness in
                let fixture = try Fixture(harness)
                let driver = fixture.store.driver
                let before = try storeRows(fixture)
                let tag = entity("Tag")
                let employee = entity("Employee")
                let seededEmployee = try requireValue(
                    before.values.first { $0.id.entity == employee.entityNumber }, "a seeded employee")
                let nameSlot = employee.index(ofProperty: "name")!  // in the model
                var renamed = seededEmployee.values
                renamed[nameSlot] = .string("Renamed")
                let newTag = RowID(entity: tag.entityNumber, primaryKey: try key(driver, tag))
                struct Stop: Error {}
                var insertTag = ChangeBatch()
                insertTag.inserts = [RowSnapshot(id: newTag, version: 1, values: row(tag, ["name": .string("fresh")]))]
                var rename = ChangeBatch()
                rename.updates = [
                    RowUpdate(
                        id: seededEmployee.id, expectedVersion: seededEmployee.version, values: renamed,
                        changedSlots: [nameSlot])
                ]
                var stale = ChangeBatch()
                stale.updates = [
                    RowUpdate(
                        id: seededEmployee.id, expectedVersion: seededEmployee.version, values: renamed,
                        changedSlots: [nameSlot])
                ]
                var duplicate = ChangeBatch()
                duplicate.inserts = [RowSnapshot(id: newTag, version: 1, values: row(tag, ["name": .string("again")]))]
                let failures: [(String, ChangeBatch?, (any Error) -> Bool)] = [
                    ("next throwing", nil, { $0 is Stop }),
                    ("an update expecting the version before an earlier part's update", stale, { _ in true }),
                    ("a second insert of a key an earlier part inserted", duplicate, { _ in true }),
                ]
                for (what, last, matches) in failures {
                    var position = 0
                    try requireThrows(what, matches: matches) {
                        _ = try driver.apply(inParts: { first in
                            if first { position = 0 }
                            position += 1
                            switch position {
                            case 1: return insertTag
                            case 2: return rename
                            case 3:
                                guard let last else { throw Stop() }
                                return last
                            default: return nil
                            }
                        })
                    }
                    try requireEqual(try storeRows(fixture), before, "rows after \(what)")
                }
                let (_, reopened) = try fixture.reopen()
                try requireEqual(try fetch(reopened, "Tag", "name == 'fresh'").count, 0, "the tag after reopening")
                try requireEqual(try fetch(reopened, "Employee", "name == 'Renamed'").count, 0, "renamed employees")
            },
        ]
    }

    /// One new key of `entity`'s hierarchy.
    private static func key(_ driver: any StoreDriver, _ entity: EntityDescription) throws -> Int64 {
        try driver.allocatePrimaryKeys(forEntity: entity.entityNumber, count: 1).lowerBound
    }

    /// A row of `entity` holding `named` values, `.null` elsewhere and no to-many members.
    private static func row(_ entity: EntityDescription, _ named: [String: StoreValue]) -> [StoreValue] {
        entity.properties.map { property in
            if let value = named[property.name] { return value }
            if let relationship = property.relationship, relationship.isToMany, !relationship.isTransient {
                return .references([])
            }
            return .null
        }
    }
}
