import Foundation
import Strata

/// Reads the JSON interchange format into a store: checks the whole file first (syntax, entities,
/// attributes, values, ids, references, inverse agreement, model rules, uniqueness against the
/// rows already stored) and writes nothing unless every object is good, then writes every object
/// as one all-or-nothing change.
///
/// The file is read as it streams by (``InterchangeStreamReader``), one object's JSON at a time,
/// twice or three times: a first pass checks every object and keeps only its id and the positions
/// of its relationship targets (and its values under uniqueness constraints); a second reads each
/// object again and writes it, a thousand rows per change set, all in one transaction
/// (``StoreDriver/apply(inParts:)``, ``InterchangeWriter``); a third restates ordered
/// relationships whose order the members' rows hold. Memory: those ids and targets, never the
/// file, its JSON tree or its values (the in-memory and XML stores hold their rows anyway).
///
/// A model with derived attributes is the exception: their values are computed from the object
/// graph, so such a file is imported through a context in one save, holding every object until
/// then.
public enum InterchangeImporter {
    /// What was imported.
    public struct Summary: Sendable {
        /// Objects inserted per entity, in model order.
        public var counts: [(entity: String, count: Int)] = []
        /// All objects inserted.
        public var total: Int { counts.reduce(0) { $0 + $1.count } }
    }

    /// Checks `data` against `model` and returns every problem (empty when the file is good).
    public static func problems(in data: Data, model: ManagedObjectModel) -> [InterchangeProblem] {
        switch parse(data) {
        case .failure(let problem): return [problem]
        case .success(let root): return ordered(InterchangeDocument(root, model: model).problems)
        }
    }

    /// Imports `data` (named `fileName` in messages) into the store at `location`.
    ///
    /// The model is the store's own when it exists and has one, else the one at `modelPath`.
    ///
    /// - Throws: ``ToolError``: usage for a missing model; failure listing every problem with its
    ///   JSON path when the file does not check, or naming the store when the save fails.
    @discardableResult
    public static func importData(
        _ data: Data, fileName: String, into location: StoreLocation, modelPath: String? = nil
    ) throws -> Summary {
        try importDocument(
            reading: { InterchangeStreamReader(data: data) }, fileName: fileName, into: location, modelPath: modelPath)
    }

    /// Imports the file at `path` into the store at `location`, reading it as it streams by: once
    /// to check it and again to write it. A file that cannot be read twice (a pipe, a device) is
    /// first copied as it streams by into a temporary file, removed afterwards.
    ///
    /// - Throws: What ``importData(_:fileName:into:modelPath:)`` throws; ``ToolError`` (usage)
    ///   when the file does not exist or is a directory, (failure) when reading it fails.
    @discardableResult
    public static func importFile(
        atPath path: String, into location: StoreLocation, modelPath: String? = nil
    ) throws -> Summary {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT != S_IFDIR,
            let first = FileHandle(forReadingAtPath: path)
        else {
            throw ToolError.usage("file '\(path)' does not exist or cannot be read")
        }
        var readable = path
        var spooled: String?
        // The spooled copy is ours, in the temporary directory; removing it is best effort.
        defer { if let spooled { unlink(spooled) } }
        if status.st_mode & S_IFMT != S_IFREG {
            defer { try? first.close() }  // read-only: closing changes nothing
            let copy = try spool(first, name: path)
            spooled = copy
            readable = copy
        } else {
            try? first.close()  // read-only: closing changes nothing
        }
        // Each pass opens the file anew.
        var handles: [FileHandle] = []
        defer { for handle in handles { try? handle.close() } }  // read-only: closing changes nothing
        return try importDocument(
            reading: {
                guard let handle = FileHandle(forReadingAtPath: readable) else {
                    throw ToolError.failure("cannot open \(path); nothing was imported")
                }
                handles.append(handle)
                return InterchangeStreamReader(handle: handle)
            }, fileName: path, into: location, modelPath: modelPath)
    }

    /// Copies what `handle` reads into a new temporary file, 1 MiB at a time, and returns its path.
    private static func spool(_ handle: FileHandle, name: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strata-import-\(UUID().uuidString).json"
        ).path
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let output = FileHandle(forWritingAtPath: path)
        else {
            throw ToolError.failure("cannot create a temporary copy of \(name) at \(path); nothing was imported")
        }
        do {
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                try output.write(contentsOf: chunk)
            }
            // A close that fails may have lost the last bytes: the copy is then not used.
            try output.close()
        } catch {
            try? output.close()  // the copy failed already and is removed on the next line
            unlink(path)
            throw ToolError.failure("cannot copy \(name) to \(path): \(error); nothing was imported")
        }
        return path
    }

    private static func importDocument(
        reading makeReader: () throws -> InterchangeStreamReader, fileName: String, into location: StoreLocation,
        modelPath: String?
    ) throws -> Summary {
        let model: ManagedObjectModel
        if location.exists {
            model = try StoreOpener.resolveModel(at: location, modelPath: modelPath).model
        } else if let modelPath {
            _ = try location.storeType()
            model = try ModelFile.load(modelPath)
        } else {
            throw ToolError.usage("'\(location.displayName)' does not exist yet; pass --model PATH to create it")
        }
        // Derived attributes are computed by a context's save from the object graph, which needs
        // every object's values.
        let derived = model.entities.contains { $0.attributes.contains { $0.derivationExpression != nil } }
        var document = InterchangeDocument(model: model, keepsValues: derived)
        var whole: JSONValue?
        do {
            var reader = try makeReader()
            try reader.read { event in
                switch event {
                case .member("objects", let value): document.objectsAreNotAnArray(value)
                case .member(let key, let value): document.header(key, value)
                case .objectsStart: document.startObjects()
                case .object(let index, let value): document.add(value, index: index)
                case .document(let value): whole = value
                }
            }
        } catch let error as JSONSyntaxError {
            throw ToolError.failure("\(fileName) is not valid JSON: \(error)")
        } catch let error as ToolError {
            throw error
        } catch {
            throw ToolError.failure("cannot read \(fileName): \(error)")
        }
        if let whole {
            document = InterchangeDocument(whole, model: model, keepsValues: derived)
        } else {
            document.finish()
        }
        if !document.problems.isEmpty {
            throw refusal(fileName, document.problems)
        }
        let existed = location.exists
        let (coordinator, store) = try StoreOpener.attach(location, model: model, readOnly: false)
        // Closed when done, so a SQLite store is left checkpointed (no -wal beside it). Best effort:
        // by then the change has committed or rolled back, and closing changes neither.
        defer { try? coordinator.remove(store) }  // the change committed or rolled back already
        if derived {
            try saveThroughContext(&document, coordinator, fileName: fileName, location: location)
        } else {
            do {
                if existed {
                    let conflicts = try InterchangeWriter.storedConflicts(document, store.driver)
                    if !conflicts.isEmpty { throw refusal(fileName, conflicts) }
                }
                var writer = InterchangeWriter(model: model)
                try writer.write(&document, into: store.driver) {
                    do {
                        return try makeReader()
                    } catch {
                        throw ToolError.failure("cannot read \(fileName) again: \(error); nothing was imported")
                    }
                }
            } catch let error as ToolError {
                throw error
            } catch let error as JSONSyntaxError {
                throw ToolError.failure("\(fileName) changed while it was imported (\(error)); nothing was imported")
            } catch {
                throw ToolError.wrapping(error, store: location.displayName)
            }
        }
        var summary = Summary()
        var counts: [String: Int] = [:]
        for object in document.objects { counts[object.entity.name, default: 0] += 1 }
        for entity in model.entities {
            if let count = counts[entity.name] { summary.counts.append((entity.name, count)) }
        }
        return summary
    }

    /// Inserts every object through a context and saves once (a model with derived attributes,
    /// which the save computes from the object graph).
    private static func saveThroughContext(
        _ document: inout InterchangeDocument, _ coordinator: PersistentStoreCoordinator, fileName: String,
        location: StoreLocation
    ) throws {
        let context = ManagedObjectContext(coordinator: coordinator)
        var created: [ManagedObject] = []
        created.reserveCapacity(document.objects.count)
        // Each object's values and members are dropped from the document once its managed
        // object holds them, so the two copies do not both stay until the save.
        for index in document.objects.indices {
            let object = document.objects[index]
            let inserted = try context.insertNewObject(forEntityName: object.entity.name)
            for (slot, value) in object.attributes {
                try inserted.setStoreValue(value, forKey: object.entity.properties[slot].name)
            }
            created.append(inserted)
            document.objects[index].attributes = [:]
        }
        for index in document.objects.indices {
            let object = document.objects[index]
            document.objects[index].relationships = [:]
            for (slot, members) in object.relationships {
                // relationships holds relationship slots
                let relationship = object.entity.properties[slot].relationship!
                if relationship.isToMany {
                    let targets = members.map { created[$0] }
                    if relationship.isOrdered {
                        created[index].setValue(targets, forKey: relationship.name)
                    } else {
                        created[index].setValue(Set(targets), forKey: relationship.name)
                    }
                } else {
                    created[index].setValue(members.first.map { created[$0] }, forKey: relationship.name)
                }
            }
        }
        do {
            try context.save()
        } catch let error as ObjectValidationError {
            let positions = Dictionary(created.enumerated().map { ($1.objectID, document.objects[$0].index) }) { a, _ in
                a
            }
            let problems = error.failures.map { failure in
                let at = positions[failure.objectID].map { "$.objects[\($0)]" } ?? "$"
                return InterchangeProblem(at + (failure.property.map { ".\($0)" } ?? ""), failure.message)
            }
            throw refusal(fileName, problems)
        } catch {
            throw ToolError.wrapping(error, store: location.displayName)
        }
    }

    private static func refusal(_ fileName: String, _ problems: [InterchangeProblem]) -> ToolError {
        let lines = ordered(problems).map { "  \($0)" }.joined(separator: "\n")
        return ToolError.failure(
            "\(fileName): nothing imported; \(problems.count) problem\(problems.count == 1 ? "" : "s"):\n\(lines)")
    }

    /// Problems in file order: by object index (stable within one object).
    static func ordered(_ problems: [InterchangeProblem]) -> [InterchangeProblem] {
        func index(_ path: String) -> Int {
            guard let open = path.range(of: "$.objects["), let close = path[open.upperBound...].firstIndex(of: "]")
            else {
                return -1
            }
            return Int(path[open.upperBound..<close]) ?? -1
        }
        return problems.enumerated().sorted {
            (index($0.element.path), $0.offset) < (index($1.element.path), $1.offset)
        }
        .map(\.element)
    }

    private static func parse(_ data: Data) -> Result<JSONValue, InterchangeProblem> {
        do {
            return .success(try JSONParser.parse(data))
        } catch let error as JSONSyntaxError {
            return .failure(InterchangeProblem("$", "\(error)"))
        } catch {
            return .failure(InterchangeProblem("$", "\(error)"))
        }
    }
}
