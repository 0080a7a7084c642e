import Foundation
import Synchronization

/// `LIKE` and `MATCHES`.
enum PredicateStringMatching {
    /// `LIKE`: `*` matches any run of characters (line breaks included), `?` exactly one character,
    /// a backslash makes the next character literal; every other character stands for itself.
    /// Characters are Swift `Character`s (grapheme clusters), compared after folding.
    static func like(_ string: String, pattern: String, options: ComparisonOptions) -> Bool {
        enum Piece: Equatable {
            case literal(Character)
            case one
            case any
        }
        var pieces: [Piece] = []
        var escaping = false
        for character in pattern {
            if escaping {
                pieces.append(.literal(character))
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == "*" {
                if pieces.last != .any { pieces.append(.any) }
            } else if character == "?" {
                pieces.append(.one)
            } else {
                pieces.append(.literal(character))
            }
        }
        if escaping { pieces.append(.literal("\\")) }
        // Fold literals one by one so that folding can never merge a literal with a wildcard.
        let folded: [Piece] = pieces.flatMap { piece -> [Piece] in
            guard case .literal(let c) = piece, !options.subtracting(.normalized).isEmpty else { return [piece] }
            return options.fold(String(c)).map { .literal($0) }
        }
        let text = Array(options.fold(string))
        // Greedy matching with one backtrack point for the last `*`: O(n·m) in the worst case.
        var (t, p) = (0, 0)
        var star: (piece: Int, text: Int)? = nil
        while t < text.count {
            if p < folded.count {
                switch folded[p] {
                case .any:
                    star = (p, t)
                    p += 1
                    continue
                case .one:
                    t += 1
                    p += 1
                    continue
                case .literal(let c) where c == text[t]:
                    t += 1
                    p += 1
                    continue
                default: break
                }
            }
            guard let last = star else { return false }
            star = (last.piece, last.text + 1)
            p = last.piece + 1
            t = last.text + 1
        }
        while p < folded.count, folded[p] == .any { p += 1 }
        return p == folded.count
    }

    /// `MATCHES`: the whole string matches an ICU regular expression. As on Apple's platforms,
    /// `^` and `$` also match at line breaks and `.` matches a line break. `[c]` makes the
    /// expression case-insensitive; `[d]` removes diacritics from both the string and the pattern.
    static func matches(_ string: String, pattern: String, options: ComparisonOptions) throws -> Bool {
        let expression = try regularExpression(
            options.contains(.diacriticInsensitive) ? ComparisonOptions.diacriticInsensitive.fold(pattern) : pattern,
            caseInsensitive: options.contains(.caseInsensitive))
        let subject = options.contains(.diacriticInsensitive)
            ? ComparisonOptions.diacriticInsensitive.fold(string) : string
        let range = NSRange(subject.startIndex..<subject.endIndex, in: subject)
        return expression.firstMatch(in: subject, options: [.anchored], range: range) != nil
    }

    private struct CacheKey: Hashable {
        var pattern: String
        var caseInsensitive: Bool
    }

    /// Compiled expressions, shared by every evaluation; bounded.
    private static let cache = Locked<[CacheKey: NSRegularExpression]>([:])

    static func regularExpression(_ pattern: String, caseInsensitive: Bool) throws -> NSRegularExpression {
        let key = CacheKey(pattern: pattern, caseInsensitive: caseInsensitive)
        if let cached = cache.withLock({ $0[key] }) { return cached }
        var options: NSRegularExpression.Options = [.anchorsMatchLines, .dotMatchesLineSeparators]
        if caseInsensitive { options.insert(.caseInsensitive) }
        do {
            // Compile the pattern alone first, so that a malformed one is reported as written and
            // cannot combine with the wrapper into something else.
            if !pattern.isEmpty { _ = try NSRegularExpression(pattern: pattern, options: options) }
            let whole = try NSRegularExpression(pattern: "(?:\(pattern))\\z", options: options)
            cache.withLock { entries in
                if entries.count >= 256 { entries.removeAll(keepingCapacity: true) }
                entries[key] = whole
            }
            return whole
        } catch {
            throw FetchPredicateError(
                .invalidRegularExpression, "MATCHES pattern \"\(pattern)\" is not a valid regular expression: \(error)")
        }
    }
}
