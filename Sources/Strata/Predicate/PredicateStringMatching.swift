import Foundation
import Synchronization

/// `LIKE` and `MATCHES`, as Foundation's `_NSPredicateOperatorUtilities` runs them: both sides
/// folded for `[c]`/`[d]`, then brought to Unicode normalization form KC (so composed and
/// decomposed `é` match, and `ﬁ` is `fi`); `[n]` skips both steps. An empty pattern is handled by
/// the caller (it matches nothing).
enum PredicateStringMatching {
    /// `string` folded by `options` and, unless `[n]`, in normalization form KC.
    static func prepared(_ string: String, _ options: ComparisonOptions) -> String {
        if options.contains(.normalized) { return string }
        return compatibilityComposed(options.fold(string))
    }

    /// `string` in normalization form KC; ASCII text, which every form leaves alone, is returned
    /// as it is without the cost of normalizing.
    static func compatibilityComposed(_ string: String) -> String {
        string.utf8.allSatisfy { $0 < 0x80 } ? string : string.precomposedStringWithCompatibilityMapping
    }

    /// `LIKE`: `*` matches any run of characters (line breaks included), `?` exactly one Unicode
    /// scalar (ICU's `.` in Foundation's translation, with `UREGEX_DOTALL`), a backslash makes the
    /// next character literal; every other character stands for itself.
    static func like(_ string: String, pattern: String, options: ComparisonOptions) -> Bool {
        enum Piece: Equatable {
            case literal(Unicode.Scalar)
            case one
            case any
        }
        var pieces: [Piece] = []
        var run = ""
        // Literal runs are folded and normalized whole, so that a letter and its combining marks
        // compose as they do in the string; wildcards never take part.
        func flush() {
            for scalar in prepared(run, options).unicodeScalars { pieces.append(.literal(scalar)) }
            run = ""
        }
        var escaping = false
        for scalar in pattern.unicodeScalars {
            if escaping {
                run.unicodeScalars.append(scalar)
                escaping = false
            } else if scalar == "\\" {
                escaping = true
            } else if scalar == "*" {
                flush()
                if pieces.last != .any { pieces.append(.any) }
            } else if scalar == "?" {
                flush()
                pieces.append(.one)
            } else {
                run.unicodeScalars.append(scalar)
            }
        }
        if escaping { run.unicodeScalars.append("\\") }
        flush()
        let text = Array(prepared(string, options).unicodeScalars)
        // Greedy matching with one backtrack point for the last `*`: O(n·m) in the worst case.
        var (t, p) = (0, 0)
        var star: (piece: Int, text: Int)? = nil
        while t < text.count {
            if p < pieces.count {
                switch pieces[p] {
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
        while p < pieces.count, pieces[p] == .any { p += 1 }
        return p == pieces.count
    }

    /// `MATCHES`: the whole string matches an ICU regular expression. As on Apple's platforms
    /// (`UREGEX_DOTALL | UREGEX_MULTILINE`), `^` and `$` also match at line breaks and `.` matches
    /// a line break. `[c]` makes the expression case-insensitive; `[d]` removes diacritics from
    /// both the string and the pattern. Both are in normalization form KC unless `[n]`; a pattern
    /// that compiles only in form C is used in form C, the string too (Foundation's fallback).
    static func matches(_ string: String, pattern: String, options: ComparisonOptions) throws -> Bool {
        let diacritics = options.intersection(.diacriticInsensitive)
        let caseInsensitive = options.contains(.caseInsensitive)
        var subject = diacritics.fold(string)
        var expression: NSRegularExpression
        if options.contains(.normalized) {
            expression = try regularExpression(diacritics.fold(pattern), caseInsensitive: caseInsensitive)
        } else {
            let folded = diacritics.fold(pattern)
            do {
                expression = try regularExpression(compatibilityComposed(folded), caseInsensitive: caseInsensitive)
                subject = compatibilityComposed(subject)
            } catch {
                expression = try regularExpression(
                    folded.precomposedStringWithCanonicalMapping, caseInsensitive: caseInsensitive)
                subject = subject.precomposedStringWithCanonicalMapping
            }
        }
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
