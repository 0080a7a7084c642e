import Foundation
import Strata

/// The payload of the `NOTIFY`s a save sends on the store's channel (docs/formats/postgresql.md,
/// "Notifications"):
///
/// `S1 <sender> <item> <item> …`, each item a kind (`i` inserted, `u` updated, `d` deleted), an
/// entity number, `:` and keys or ranges of keys separated by commas: `S1 k3x9a i3:1-100,105 u4:7`.
///
/// A save's changes are split over as many payloads as it takes to keep each under PostgreSQL's
/// 8,000-byte limit; each payload stands alone. `sender` is the saving driver's token, so a driver
/// skips what it sent itself.
enum RemoteChangePayload {
    /// The largest payload sent, in bytes (PostgreSQL refuses 8,000 and more).
    static let maximumBytes = 7_900
    static let version = "S1"

    /// The payloads announcing `changes`, sent by the driver with `token`.
    static func encode(_ changes: RemoteChanges, token: String, maximumBytes: Int = maximumBytes) -> [String] {
        let header = "\(version) \(token)"
        var payloads: [String] = []
        var current = header
        func add(_ item: String) {
            if current.utf8.count + 1 + item.utf8.count > maximumBytes, current != header {
                payloads.append(current)
                current = header
            }
            current += " " + item
        }
        for (kind, ids) in [("i", changes.inserted), ("u", changes.updated), ("d", changes.deleted)] {
            var byEntity: [Int32: [Int64]] = [:]
            for id in ids { byEntity[id.entity, default: []].append(id.primaryKey) }
            for (entity, keys) in byEntity.sorted(by: { $0.key < $1.key }) {
                let prefix = "\(kind)\(entity):"
                // Ranges in as few items as the size limit allows.
                var item = prefix
                let budget = maximumBytes - header.utf8.count - 1
                for range in ranges(keys.sorted()) {
                    let text =
                        range.lowerBound == range.upperBound
                        ? "\(range.lowerBound)" : "\(range.lowerBound)-\(range.upperBound)"
                    if item != prefix, item.utf8.count + 1 + text.utf8.count > budget {
                        add(item)
                        item = prefix
                    }
                    item += (item == prefix ? "" : ",") + text
                }
                if item != prefix { add(item) }
            }
        }
        if current != header { payloads.append(current) }
        return payloads
    }

    /// Runs of consecutive keys.
    static func ranges(_ sorted: [Int64]) -> [ClosedRange<Int64>] {
        var result: [ClosedRange<Int64>] = []
        for key in sorted {
            if let last = result.last, last.upperBound < Int64.max, last.upperBound + 1 == key {
                result[result.count - 1] = last.lowerBound...key
            } else if let last = result.last, last.contains(key) {
                continue
            } else {
                result.append(key...key)
            }
        }
        return result
    }

    /// The changes a payload announces; `nil` for a payload this driver sent (`token`), or one that
    /// is not Strata's (another program on the channel), or malformed. Ranges are bounded: a
    /// payload cannot announce more than `maximumRows` rows.
    static func decode(_ payload: String, ignoring token: String, maximumRows: Int = 10_000_000) -> RemoteChanges? {
        let parts = payload.split(separator: " ")
        guard parts.count >= 2, parts[0] == version, parts[1] != token else { return nil }
        var changes = RemoteChanges()
        var total = 0
        for item in parts.dropFirst(2) {
            guard let kind = item.first, let colon = item.firstIndex(of: ":"),
                let entity = Int32(item[item.index(after: item.startIndex)..<colon])
            else { return nil }
            var ids: [RowID] = []
            for text in item[item.index(after: colon)...].split(separator: ",") {
                let bounds = text.split(separator: "-", maxSplits: 1)
                guard let low = bounds.first.flatMap({ Int64($0) }), low > 0 else { return nil }
                let high = bounds.count == 2 ? Int64(bounds[1]) : low
                guard let high, high >= low else { return nil }
                // `high - low` cannot overflow (both are positive), and the sum is checked before it grows.
                guard high - low < Int64(maximumRows - total) else { return nil }
                total += Int(high - low) + 1
                for key in low...high { ids.append(RowID(entity: entity, primaryKey: key)) }
            }
            switch kind {
            case "i": changes.inserted += ids
            case "u": changes.updated += ids
            case "d": changes.deleted += ids
            default: return nil
            }
        }
        return changes
    }
}
