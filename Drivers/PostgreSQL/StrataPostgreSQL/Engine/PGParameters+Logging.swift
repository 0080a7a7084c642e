import CLibPQ
import Foundation

/// How bound parameters read in the store log (``StoreLog``, level 2 and up): `$1 = 42, $2 = 'text'`.
///
/// Only the log calls this, and only when values are logged; a statement's parameters are never
/// written into its SQL.
extension PGParameters {
    /// The most elements of an array, and bytes of a `bytea`, a log line shows.
    static let loggedElementLimit = 10
    /// The most characters of a text value a log line shows.
    static let loggedTextLimit = 200

    /// Every parameter as `$n = value`, separated by commas.
    var loggedValues: String {
        (0..<count).map { "$\($0 + 1) = \(loggedValue(at: $0))" }.joined(separator: ", ")
    }

    /// Parameter `index` as SQL would write it.
    func loggedValue(at index: Int) -> String {
        let offset = offsets[index]
        guard offset >= 0 else { return "NULL" }
        let value = bytes[offset..<(offset + Int(lengths[index]))]
        if formats[index] == 0 { return Self.quoted(String(decoding: value, as: UTF8.self)) }
        return Self.binaryValue(value, type: types[index])
    }

    /// A value in PostgreSQL's binary format, or its size when its type is not one the driver sends.
    private static func binaryValue(_ value: ArraySlice<UInt8>, type: Oid) -> String {
        switch type {
        case PGType.bool: return value.first == 1 ? "true" : "false"
        case PGType.int4 where value.count == 4: return "\(Int32(bitPattern: UInt32(bigEndianBytes: value)))"
        case PGType.int8 where value.count == 8: return "\(Int64(bitPattern: UInt64(bigEndianBytes: value)))"
        case PGType.float8 where value.count == 8: return "\(Double(bitPattern: UInt64(bigEndianBytes: value)))"
        case PGType.text: return quoted(String(decoding: value, as: UTF8.self))
        case PGType.bytea:
            let hex = value.prefix(loggedElementLimit).map { String(format: "%02x", $0) }.joined()
            return "'\\x\(hex)\(value.count > loggedElementLimit ? "…" : "")' (\(value.count) bytes)"
        case PGType.uuid where value.count == 16:
            let bytes = Array(value)
            let uuid = UUID(
                uuid: (
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                    bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                ))
            return "'\(uuid.uuidString.lowercased())'"
        case PGType.boolArray, PGType.byteaArray, PGType.int4Array, PGType.textArray, PGType.int8Array,
            PGType.float8Array, PGType.uuidArray:
            return array(value) ?? "(an array of \(value.count) bytes)"
        default: return "(\(value.count) bytes of type \(type))"
        }
    }

    /// A one-dimensional binary array as `{1,2,3}`, the first ``loggedElementLimit`` elements and
    /// the count of the rest; `nil` when the bytes are not one.
    private static func array(_ value: ArraySlice<UInt8>) -> String? {
        var position = value.startIndex
        func int32() -> Int32? {
            guard value.endIndex - position >= 4 else { return nil }
            defer { position += 4 }
            return Int32(bitPattern: UInt32(bigEndianBytes: value[position..<(position + 4)]))
        }
        guard let dimensions = int32(), int32() != nil, let elementType = int32() else { return nil }
        if dimensions == 0 { return "{}" }
        guard dimensions == 1, let count = int32(), count >= 0, int32() != nil else { return nil }
        var elements: [String] = []
        for _ in 0..<min(Int(count), loggedElementLimit) {
            guard let length = int32() else { return nil }
            if length < 0 {
                elements.append("NULL")
                continue
            }
            guard value.endIndex - position >= Int(length) else { return nil }
            elements.append(binaryValue(value[position..<(position + Int(length))], type: Oid(bitPattern: elementType)))
            position += Int(length)
        }
        let rest = Int(count) - elements.count
        return "{\(elements.joined(separator: ","))\(rest > 0 ? ",… \(rest) more" : "")}"
    }

    /// `text` as an SQL string literal, cut at ``loggedTextLimit`` characters.
    private static func quoted(_ text: String) -> String {
        let shown = text.count > loggedTextLimit ? String(text.prefix(loggedTextLimit)) + "…" : text
        return "'" + shown.replacingOccurrences(of: "'", with: "''") + "'"
    }
}

extension UInt32 {
    /// The big-endian integer in `bytes` (exactly four).
    fileprivate init(bigEndianBytes bytes: ArraySlice<UInt8>) {
        self = bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }
}

extension UInt64 {
    /// The big-endian integer in `bytes` (exactly eight).
    fileprivate init(bigEndianBytes bytes: ArraySlice<UInt8>) {
        self = bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
