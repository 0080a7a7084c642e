import Foundation

extension ManagedObjectModel {
    /// Loads a model from an Xcode model on disk.
    ///
    /// `url` may be:
    /// - an `.xcdatamodeld` bundle: the version named by its `.xccurrentversion` plist
    ///   (`_XCCurrentVersionName`) is loaded; without that plist, the bundle must hold exactly one
    ///   version;
    /// - an `.xcdatamodel` folder: its `contents` file is loaded;
    /// - a `contents` XML file itself, whatever its name.
    ///
    /// - Parameter url: A file URL of the bundle, folder or file.
    /// - Throws: ``ModelError``: `.unreadable` when nothing usable is at `url` (or the bundle's
    ///   current version is ambiguous), `.malformed` when the XML does not parse (with line and
    ///   column), other codes when the model is inconsistent; ``ModelError/file`` names the file.
    public convenience init(contentsOf url: URL) throws {
        let file = try ModelLoader.contentsFile(at: url, versionName: nil)
        try self.init(xmlData: try ModelLoader.read(file), fileName: file.path)
    }

    /// Loads a model from the XML of an `.xcdatamodel/contents` file held in memory.
    ///
    /// - Parameters:
    ///   - xmlData: The file's bytes.
    ///   - fileName: The name errors give for the file.
    /// What the file holds that Strata does not use as written is listed in ``loadWarnings``.
    ///
    /// - Throws: ``ModelError`` naming `fileName`, the line and the element at fault.
    public convenience init(xmlData: Data, fileName: String = "contents") throws {
        let root = try ModelXMLParser.parse(xmlData, fileName: fileName)
        var decoder = ModelContentsDecoder(fileName: fileName)
        let contents = try decoder.decode(root)
        do {
            try self.init(
                entities: contents.entities, configurations: contents.configurations,
                fetchRequestTemplates: contents.fetchRequestTemplates, versionIdentifiers: contents.versionIdentifiers,
                userInfo: contents.userInfo, loadWarnings: contents.warnings)
        } catch var error as ModelError {
            // The checks in the designated initializer know entities, not files: add the place.
            error.file = error.file ?? fileName
            if error.line == nil, let element = error.element { error.line = contents.lines[element] }
            throw error
        }
    }

    /// Loads a model from an Xcode model on disk, optionally choosing a version of a bundle.
    ///
    /// Same as ``init(contentsOf:)``, except that for an `.xcdatamodeld` bundle `versionName`
    /// (`"Model 2"` or `"Model 2.xcdatamodel"`) picks the version instead of `.xccurrentversion`.
    /// For an `.xcdatamodel` folder or a `contents` file, which hold one version, it is not used.
    ///
    /// - Throws: ``ModelError``; `.unreadable` lists the bundle's versions when `versionName` is not one.
    public static func load(contentsOf url: URL, versionName: String? = nil) throws -> ManagedObjectModel {
        let file = try ModelLoader.contentsFile(at: url, versionName: versionName)
        return try ManagedObjectModel(xmlData: try ModelLoader.read(file), fileName: file.path)
    }

    /// The version names (`"Model"`, `"Model 2"`, …) of an `.xcdatamodeld` bundle, sorted, and the
    /// current one when `.xccurrentversion` names it.
    ///
    /// - Throws: ``ModelError`` `.unreadable` when `url` is not a readable folder.
    public static func versions(inBundle url: URL) throws -> (names: [String], current: String?) {
        let names = try ModelLoader.versionFolders(in: url).map { $0.deletingPathExtension().lastPathComponent }
        let current = try ModelLoader.currentVersionName(in: url).map {
            $0.hasSuffix(".xcdatamodel") ? String($0.dropLast(".xcdatamodel".count)) : $0
        }
        return (names, current)
    }
}

/// Finds the `contents` file an Xcode model URL stands for and reads it.
enum ModelLoader {
    static func read(_ file: URL) throws -> Data {
        do {
            return try Data(contentsOf: file)
        } catch {
            throw ModelError(.unreadable, "cannot read the model file: \(error.localizedDescription)", file: file.path)
        }
    }

    /// The `contents` file of a bundle, a version folder, or the file itself.
    static func contentsFile(at url: URL, versionName: String?) throws -> URL {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw ModelError(.unreadable, "no model file or folder exists here", file: url.path)
        }
        guard isDirectory.boolValue else { return url }
        let contents = url.appendingPathComponent("contents")
        if url.pathExtension != "xcdatamodeld", FileManager.default.fileExists(atPath: contents.path) {
            return contents
        }
        if url.pathExtension == "xcdatamodel" {
            let legacy = FileManager.default.fileExists(atPath: url.appendingPathComponent("elements").path)
            throw ModelError(
                .unreadable,
                legacy
                    ? "this model is in Xcode 3's binary format (elements/layout files), which Strata cannot read; open and save it in a current Xcode"
                    : "the model folder has no 'contents' file",
                file: url.path)
        }
        return try versionFolder(in: url, named: versionName).appendingPathComponent("contents")
    }

    /// The version folder of a bundle: `name`, else the current version, else the only version.
    static func versionFolder(in bundle: URL, named name: String?) throws -> URL {
        let folders = try versionFolders(in: bundle)
        let listing =
            folders.isEmpty
            ? "it holds no .xcdatamodel folder"
            : "its versions are " + folders.map { "'\($0.lastPathComponent)'" }.joined(separator: ", ")
        func folder(named wanted: String) -> URL? {
            let full = wanted.hasSuffix(".xcdatamodel") ? wanted : wanted + ".xcdatamodel"
            return folders.first { $0.lastPathComponent == full }
        }
        if let name {
            guard let match = folder(named: name) else {
                throw ModelError(
                    .unreadable, "the bundle has no version named '\(name)'; \(listing)", file: bundle.path)
            }
            return match
        }
        if let current = try currentVersionName(in: bundle) {
            guard let match = folder(named: current) else {
                throw ModelError(
                    .unreadable, ".xccurrentversion names version '\(current)', which the bundle lacks; \(listing)",
                    file: bundle.path)
            }
            return match
        }
        guard folders.count == 1, let only = folders.first else {
            throw ModelError(
                .unreadable,
                "the bundle has no .xccurrentversion naming its current version and \(listing); add .xccurrentversion or load a version folder",
                file: bundle.path)
        }
        return only
    }

    /// The `.xcdatamodel` folders of a bundle, sorted by version name with numbers compared as
    /// numbers (`Model`, `Model 2`, `Model 10`).
    static func versionFolders(in bundle: URL) throws -> [URL] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: bundle.path)
        } catch {
            throw ModelError(
                .unreadable, "cannot list the model bundle: \(error.localizedDescription)", file: bundle.path)
        }
        let versions = names.filter { $0.hasSuffix(".xcdatamodel") }.map { String($0.dropLast(".xcdatamodel".count)) }
        return versions.sorted { $0.compare($1, options: .numeric) == .orderedAscending }
            .map { bundle.appendingPathComponent($0 + ".xcdatamodel") }
    }

    /// The value of `_XCCurrentVersionName` in the bundle's `.xccurrentversion` plist, if any.
    static func currentVersionName(in bundle: URL) throws -> String? {
        let file = bundle.appendingPathComponent(".xccurrentversion")
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        let plist: Any
        do {
            plist = try PropertyListSerialization.propertyList(from: try read(file), options: [], format: nil)
        } catch let error as ModelError {
            throw error
        } catch {
            throw ModelError(
                .malformed, "the file is not a property list: \(error.localizedDescription)", file: file.path)
        }
        guard let dictionary = plist as? [String: Any] else {
            throw ModelError(.malformed, "the property list is not a dictionary", file: file.path)
        }
        guard let name = dictionary["_XCCurrentVersionName"] else { return nil }
        guard let text = name as? String, !text.isEmpty else {
            throw ModelError(.malformed, "_XCCurrentVersionName is not a non-empty string", file: file.path)
        }
        return text
    }
}
