import Foundation
import Strata

/// Loads models named on the command line: Xcode models (`.xcdatamodeld` bundles, `.xcdatamodel`
/// folders, `contents` files), Strata model encodings (`.json`, see ``ModelArchive``), or the model
/// inside a store (any store location).
public enum ModelFile {
    /// Loads a model file.
    ///
    /// - Throws: ``ToolError`` (usage) when the file is missing or is not a readable model; the
    ///   message names the file and, for Xcode models, the line at fault.
    public static func load(_ path: String) throws -> ManagedObjectModel {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw ToolError.usage("model file '\(path)' does not exist")
        }
        do {
            if isArchive(url) {
                return try ManagedObjectModel(encodedRepresentation: try Data(contentsOf: url))
            }
            return try ManagedObjectModel(contentsOf: url)
        } catch let error as ModelError {
            var error = error
            if error.file == nil { error.file = path }
            throw ToolError.usage("model '\(path)' is not usable: \(error)")
        } catch {
            throw ToolError.usage("model '\(path)' is not readable: \(error.localizedDescription)")
        }
    }

    /// Whether `url` holds a Strata model encoding rather than Xcode XML.
    static func isArchive(_ url: URL) -> Bool {
        if url.pathExtension.lowercased() == "json" { return true }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue,
            let handle = try? FileHandle(forReadingFrom: url)
        else { return false }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 64)) ?? Data()
        return head.first { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) } == UInt8(ascii: "{")
    }

    /// Whether `text` names a model file rather than a store.
    public static func looksLikeModel(_ text: String) -> Bool {
        let url = URL(fileURLWithPath: text)
        let ext = url.pathExtension.lowercased()
        if ["xcdatamodeld", "xcdatamodel", "json", "xcdatamodel.xml"].contains(ext) { return true }
        if url.lastPathComponent == "contents" { return true }
        if text.contains(":") && KnownDriver(rawValue: String(text.prefix { $0 != ":" }).lowercased()) != nil {
            return false
        }
        return ext == "xml" && isXcodeModel(url)
    }

    /// Whether an `.xml` file is an Xcode model (`<model …>` root) rather than an XML store.
    private static func isXcodeModel(_ url: URL) -> Bool {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return false }
        defer { try? handle.close() }
        let head = String(decoding: (try? handle.read(upToCount: 512)) ?? Data(), as: UTF8.self)
        return head.contains("<model ") || head.contains("<model>")
    }

    /// Loads the model `text` names: a model file, or the model of the store at a location.
    public static func loadModelOrStore(_ text: String) throws -> (model: ManagedObjectModel, source: String) {
        if looksLikeModel(text) { return (try load(text), "file") }
        let location = try StoreLocation(parsing: text)
        let resolved = try StoreOpener.resolveModel(at: location, modelPath: nil)
        return (resolved.model, resolved.source)
    }
}
