import Foundation
import Strata
import Synchronization

// Every save path, with and without relationships, and every kind of failed save followed by a
// retry. The rule each case checks: nothing is reported saved unless its row reached the store in
// that commit, and a save that failed can be retried and then saves every change exactly once.
extension ConformanceSuite {
    static var saveCases: [ConformanceCase] {
        [
            ConformanceCase("an object given a permanent ID before the save is saved (no relationships in the context)")
            { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let car = try context.insertNewObject(forEntityName: "Car")
                car["name"] = "early"
                try context.obtainPermanentIDs(for: [car])
                try require(!car.objectID.isTemporaryID, "the car has a permanent ID")
                try context.save()
                try requireEqual(
                    try fixture.store.driver.rows(for: [car.objectID.rowID]).count, 1, "the car's row in the driver")
                try requireEqual(
                    names(try fetch(fixture.context(), "Car", "name == 'early'")), ["early"], "the car in a new context"
                )
            },
            ConformanceCase("an object given a permanent ID before the save is saved (with relationships)") { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let department = try context.insertNewObject(forEntityName: "Department")
                department["name"] = "Early"
                let employee = try context.insertNewObject(forEntityName: "Employee")
                employee["name"] = "early"
                employee["department"] = department
                try context.obtainPermanentIDs(for: [employee])
                try context.save()
                let again = try fetch(fixture.context(), "Employee", "name == 'early'")
                try requireEqual(again.count, 1, "the employee in a new context")
                try requireEqual(
                    again.first?.object(forKey: "department")?.value(forKey: "name") as? String, "Early",
                    "her department")
            },
            ConformanceCase("an insert saved with a stale update survives the retry after refresh (no relationships)") {
                harness in
                let fixture = try Fixture(harness)
                let mine = fixture.context()
                let theirs = fixture.context()
                let alpha = try fetch(mine, "Car", "name == 'Alpha'")[0]
                _ = alpha.value(forKey: "seats")
                try fetch(theirs, "Car", "name == 'Alpha'")[0]["seats"] = 7
                try theirs.save()
                alpha["seats"] = 9
                let fresh = try mine.insertNewObject(forEntityName: "Car")
                fresh["name"] = "retried"
                try requireThrows("the stale save", matches: { ($0 as? StoreError)?.code == .conflict }) {
                    try mine.save()
                }
                mine.refresh(alpha, mergeChanges: true)
                try mine.save()
                let check = fixture.context()
                try requireEqual(
                    names(try fetch(check, "Car", "name == 'retried'")), ["retried"], "the insert after the retry")
                try requireEqual(
                    try fetch(check, "Car", "name == 'Alpha'")[0].value(forKey: "seats") as? Int, 9, "Alpha's seats")
                try require(!mine.hasChanges, "nothing left to save")
            },
            ConformanceCase("an insert saved with a stale update survives the retry after refresh (with relationships)")
            { harness in
                let fixture = try Fixture(harness)
                let mine = fixture.context()
                let theirs = fixture.context()
                let dan = try fetch(mine, "Employee", "name == 'Dan'")[0]
                _ = dan.value(forKey: "age")
                try fetch(theirs, "Employee", "name == 'Dan'")[0]["age"] = 70
                try theirs.save()
                dan["age"] = 71
                let fresh = try mine.insertNewObject(forEntityName: "Employee")
                fresh["name"] = "retried"
                fresh["mentor"] = dan
                try requireThrows("the stale save", matches: { ($0 as? StoreError)?.code == .conflict }) {
                    try mine.save()
                }
                mine.refresh(dan, mergeChanges: true)
                try mine.save()
                let check = fixture.context()
                let again = try fetch(check, "Employee", "name == 'retried'")
                try requireEqual(again.count, 1, "the insert after the retry")
                try requireEqual(
                    again.first?.object(forKey: "mentor")?.value(forKey: "name") as? String, "Dan", "its mentor")
                try requireEqual(
                    try fetch(check, "Employee", "name == 'Dan'")[0].value(forKey: "age") as? Int, 71, "Dan's age")
            },
            ConformanceCase("a save refused by validation saves every change once the object is fixed") { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let car = try context.insertNewObject(forEntityName: "Car")
                car["name"] = "valid"
                try context.obtainPermanentIDs(for: [car])
                let tag = try context.insertNewObject(forEntityName: "Tag")
                try requireThrows("a tag without its required name") { try context.save() }
                tag["name"] = "fixed"
                try context.save()
                let check = fixture.context()
                try requireEqual(names(try fetch(check, "Car", "name == 'valid'")), ["valid"], "the car")
                try requireEqual(names(try fetch(check, "Tag", "name == 'fixed'")), ["fixed"], "the tag")
            },
            ConformanceCase("a save that failed in the driver changes nothing and saves every change on retry") {
                harness in
                for code in [StoreError.Code.io, .locked, .full] {
                    let fixture = try Fixture(harness.recording)
                    let driver = try recordingDriver(fixture.store)
                    let context = fixture.context()
                    let early = try context.insertNewObject(forEntityName: "Car")
                    early["name"] = "early"
                    try context.obtainPermanentIDs(for: [early])
                    let late = try context.insertNewObject(forEntityName: "Truck")
                    late["name"] = "late"
                    try fetch(context, "Car", "name == 'Alpha'")[0]["seats"] = 11
                    context.delete(try fetch(context, "Car", "name == 'beta'")[0])
                    driver.failNext(.apply, with: StoreError(code, "injected \(code) failure"))
                    try requireThrows(
                        "the save with an injected \(code) failure", matches: { ($0 as? StoreError)?.code == code }
                    ) {
                        try context.save()
                    }
                    try requireEqual(
                        try fixture.context().count(for: FetchRequest(entityName: "Vehicle")), 5,
                        "vehicles after the failed save (\(code))")
                    try require(context.hasChanges, "the failed save keeps its changes (\(code))")
                    try context.save()
                    let check = fixture.context()
                    try requireEqual(
                        Set(names(try fetch(check, "Vehicle"))),
                        ["Alpha", "Gamma", "delta", "Epsilon", "early", "late"], "vehicles after the retry (\(code))")
                    try requireEqual(
                        try fetch(check, "Car", "name == 'Alpha'")[0].value(forKey: "seats") as? Int, 11,
                        "Alpha's seats (\(code))")
                    try require(!context.hasChanges, "nothing left to save (\(code))")
                }
            },
            ConformanceCase("a save whose key allocation failed saves every change on retry") { harness in
                let fixture = try Fixture(harness.recording)
                let driver = try recordingDriver(fixture.store)
                let context = fixture.context()
                let first = try context.insertNewObject(forEntityName: "Track")
                first["title"] = "first"
                let department = try context.insertNewObject(forEntityName: "Department")
                department["name"] = "Keys"
                let employee = try context.insertNewObject(forEntityName: "Employee")
                employee["name"] = "keys"
                employee["department"] = department
                driver.failNext(.allocatePrimaryKeys, with: StoreError(.io, "injected allocation failure"))
                try requireThrows("the save with a failed allocation", matches: { ($0 as? StoreError)?.code == .io }) {
                    try context.save()
                }
                try context.save()
                let check = fixture.context()
                try requireEqual(names(try fetch(check, "Track", "title == 'first'"), "title"), ["first"], "the track")
                let again = try fetch(check, "Employee", "name == 'keys'")
                try requireEqual(again.count, 1, "the employee")
                try requireEqual(
                    again.first?.object(forKey: "department")?.value(forKey: "name") as? String, "Keys",
                    "her department")
            },
            ConformanceCase(
                "a later store failing after an earlier one committed is a partial commit; the retry saves the rest once"
            ) { harness in
                let staffDirectory = try TemporaryDirectory(prefix: "conformance-staff")
                let mediaDirectory = try TemporaryDirectory(prefix: "conformance-media")
                let type = RecordingDriver.storeType(wrapping: harness.storeType)
                let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
                let staff = try coordinator.addPersistentStore(
                    type: type, configuration: "Staff", at: harness.location(staffDirectory.url),
                    options: harness.options)
                let media = try coordinator.addPersistentStore(
                    type: type, configuration: "Media", at: harness.location(mediaDirectory.url),
                    options: harness.options)
                let context = ManagedObjectContext(coordinator: coordinator)
                let department = try context.insertNewObject(forEntityName: "Department")
                department["name"] = "Partial"
                let playlist = try context.insertNewObject(forEntityName: "Playlist")
                playlist["title"] = "partial"
                try recordingDriver(media).failNext(.apply, with: StoreError(.io, "injected failure"))
                try requireThrows(
                    "the save that fails in the second store", matches: { ($0 as? StoreError)?.code == .partialCommit }
                ) {
                    try context.save()
                }
                try require(!department.isInserted, "the committed department is saved")
                try require(playlist.isInserted, "the playlist is still to be saved")
                try context.save()
                try require(!context.hasChanges, "nothing left to save")
                let check = ManagedObjectContext(coordinator: coordinator)
                try requireEqual(
                    names(try fetch(check, "Department", "name == 'Partial'")), ["Partial"], "the department, once")
                try requireEqual(
                    names(try fetch(check, "Playlist", "title == 'partial'"), "title"), ["partial"],
                    "the playlist, once")
                try requireEqual(
                    try staff.driver.fetch(StoreFetch(entity: department.entity)).rows.count, 1,
                    "rows in the staff store")
            },
            ConformanceCase("a change to an object deleted elsewhere is refused, not reported saved") { harness in
                let fixture = try Fixture(harness)
                let mine = fixture.context()
                let loaded = try fetch(mine, "Track", "title == 'Track 2'")[0]
                _ = loaded.value(forKey: "title")
                let unloaded = try fetch(fixture.context(), "Track", "title == 'Track 4'")[0].objectID
                let fault = mine.object(with: unloaded)
                let theirs = fixture.context()
                for title in ["Track 2", "Track 4"] {
                    theirs.delete(try fetch(theirs, "Track", "title == '\(title)'")[0])
                }
                try theirs.save()
                loaded["title"] = "changed after delete"
                try requireThrows(
                    "saving a change to a deleted row",
                    matches: {
                        [.conflict, .notFound].contains(($0 as? StoreError)?.code)
                    }
                ) { try mine.save() }
                mine.rollback()
                try requireThrows(
                    "changing a fault whose row was deleted", matches: { ($0 as? StoreError)?.code == .notFound }
                ) {
                    try fault.setConvertedValue("changed after delete", forKey: "title")
                }
                try requireEqual(
                    try fetch(fixture.context(), "Track", "title BEGINSWITH 'changed'").count, 0,
                    "rows named by the refused changes")
            },
        ]
    }

    static var raceCases: [ConformanceCase] {
        [
            ConformanceCase("a row deleted while a fetch was reading it does not come back through the row cache") {
                harness in
                let fixture = try Fixture(harness.recording)
                let driver = try recordingDriver(fixture.store)
                let victim = try fetch(fixture.context(), "Track", "title == 'Track 2'")[0].objectID
                let reader = fixture.context()
                let readDone = DispatchSemaphore(value: 0)
                let proceed = DispatchSemaphore(value: 0)
                driver.afterNext(.fetch) {
                    readDone.signal()
                    proceed.wait()
                }
                let finished = DispatchSemaphore(value: 0)
                let outcome = Locked<Result<Int, any Error>?>(nil)
                Thread {
                    let result = Result { try reader.performAndWait { try fetch(reader, "Track").count } }
                    outcome.withLock { $0 = result }
                    finished.signal()
                }.start()
                readDone.wait()
                let deleter = fixture.context()
                deleter.delete(try deleter.existingObject(with: victim))
                try deleter.save()
                proceed.signal()
                finished.wait()
                try requireEqual(
                    try outcome.withLock { $0 }?.get(), 6, "tracks the racing fetch read before the delete")
                try requireThrows(
                    "existingObject for the deleted row in a new context",
                    matches: { ($0 as? StoreError)?.code == .notFound }
                ) {
                    _ = try fixture.context().existingObject(with: victim)
                }
                try requireEqual(
                    try fetch(fixture.context(), "Track", "title == 'Track 2'").count, 0, "fetching the deleted row")
            }
        ]
    }

    static func recordingDriver(_ store: PersistentStore) throws -> RecordingDriver {
        guard let driver = store.driver as? RecordingDriver else {
            throw ConformanceFailure(
                message: "the store was not opened through RecordingDriver", file: #fileID, line: #line)
        }
        return driver
    }
}

extension DriverHarness {
    /// This harness with its drivers wrapped in ``RecordingDriver``s.
    public var recording: DriverHarness {
        var harness = self
        harness.storeType = RecordingDriver.storeType(wrapping: storeType)
        return harness
    }
}
