import Foundation

/// `CAST(value, "Type")`: the conversions the parser folds and the evaluator applies.
enum PredicateValueCast {
    static func cast(_ value: StoreValue, to type: String) throws -> StoreValue {
        if case .null = value { return .null }
        func fail() -> FetchPredicateError {
            FetchPredicateError(.typeMismatch, "cannot cast \(value.kindName.withArticle) to \(type)")
        }
        switch type {
        case "NSDate":
            switch value {
            case .date: return value
            case .string(let s):
                guard let seconds = Double(s) else { throw fail() }
                return .date(Date(timeIntervalSinceReferenceDate: seconds))
            default:
                guard let number = PredicateNumber(value) else { throw fail() }
                return .date(Date(timeIntervalSinceReferenceDate: number.doubleValue))
            }
        case "NSNumber":
            switch value {
            case .integer, .double, .bool: return value
            case .decimal(let d): return .double(NSDecimalNumber(decimal: d).doubleValue)
            case .date(let d): return .double(d.timeIntervalSinceReferenceDate)
            case .string(let s):
                let trimmed = s.trimmingCharacters(in: .whitespaces)
                if let n = Int64(trimmed) { return .integer(n) }
                if let d = Double(trimmed) { return .double(d) }
                throw fail()
            default: throw fail()
            }
        case "NSDecimalNumber":
            switch value {
            case .decimal: return value
            case .integer(let n): return .decimal(Decimal(n))
            case .double(let d): return .decimal(Decimal(d))
            case .bool(let b): return .decimal(b ? 1 : 0)
            case .string(let s):
                guard let d = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")) else { throw fail() }
                return .decimal(d)
            default: throw fail()
            }
        case "NSString":
            switch value {
            case .string: return value
            case .integer(let n): return .string(String(n))
            case .double(let d): return .string(String(d))
            case .decimal(let d): return .string(d.description)
            case .bool(let b): return .string(b ? "1" : "0")
            case .uuid(let u): return .string(u.uuidString)
            case .uri(let u): return .string(u.absoluteString)
            case .date(let d): return .string(String(d.timeIntervalSinceReferenceDate))
            default: throw fail()
            }
        case "NSUUID":
            switch value {
            case .uuid: return value
            case .string(let s):
                guard let uuid = UUID(uuidString: s) else { throw fail() }
                return .uuid(uuid)
            default: throw fail()
            }
        case "NSURL":
            switch value {
            case .uri: return value
            case .string(let s):
                guard let url = URL(string: s) else { throw fail() }
                return .uri(url)
            default: throw fail()
            }
        case "NSData":
            switch value {
            case .binary: return value
            case .string(let s):
                guard let data = Data(base64Encoded: s) else { throw fail() }
                return .binary(data)
            default: throw fail()
            }
        case "RowID":
            switch value {
            case .reference: return value
            case .string(let s):
                // "entity/pKEY", as RowID.description writes it.
                let parts = s.split(separator: "/", maxSplits: 1)
                guard parts.count == 2, let entity = Int32(parts[0]), parts[1].hasPrefix("p"),
                    let key = Int64(parts[1].dropFirst())
                else { throw fail() }
                return .reference(RowID(entity: entity, primaryKey: key))
            default: throw fail()
            }
        default:
            throw FetchPredicateError(.unsupported, "CAST to '\(type)' is not supported")
        }
    }
}
