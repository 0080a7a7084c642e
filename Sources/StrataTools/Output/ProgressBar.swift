import Foundation

/// Progress of a long copy, as ``StoreConverter`` reports it.
public struct ConversionProgress: Sendable {
    /// The entity being copied.
    public var entity: String
    /// Rows of that entity copied so far.
    public var entityCopied: Int
    /// Rows of that entity in all.
    public var entityTotal: Int
    /// Rows copied so far, all entities.
    public var copied: Int
    /// Rows to copy, all entities.
    public var total: Int

    /// Creates a progress report.
    public init(entity: String, entityCopied: Int, entityTotal: Int, copied: Int, total: Int) {
        self.entity = entity
        self.entityCopied = entityCopied
        self.entityTotal = entityTotal
        self.copied = copied
        self.total = total
    }
}

/// Renders ``ConversionProgress``: on a terminal a bar redrawn in place with rate and ETA; on
/// anything else one plain line per finished entity.
///
/// Thread safety: not `Sendable`; use from the thread running the conversion.
public final class ProgressBar {
    private let isTerminal: Bool
    private let write: (String) -> Void
    private let start: Date
    private var lastDraw = Date.distantPast
    private var lastEntity: String?

    /// Creates a renderer.
    ///
    /// - Parameters:
    ///   - isTerminal: Whether output goes to a terminal (draw a bar) or not (plain lines).
    ///   - now: The start time.
    ///   - write: Where text goes (the CLI passes standard error).
    public init(isTerminal: Bool, now: Date = Date(), write: @escaping (String) -> Void) {
        self.isTerminal = isTerminal
        self.start = now
        self.write = write
    }

    /// Reports progress.
    public func update(_ progress: ConversionProgress, now: Date = Date()) {
        if isTerminal {
            let finished = progress.copied == progress.total
            guard finished || now.timeIntervalSince(lastDraw) >= 0.1 else { return }
            lastDraw = now
            write("\r" + Self.barLine(progress, elapsed: now.timeIntervalSince(start)) + "\u{1B}[K")
            if finished { write("\n") }
        } else if progress.entityCopied == progress.entityTotal, lastEntity != progress.entity {
            lastEntity = progress.entity
            write(
                "copied \(progress.entity): \(progress.entityTotal) row\(progress.entityTotal == 1 ? "" : "s") (\(progress.copied)/\(progress.total))\n"
            )
        }
    }

    /// One line of the bar: `[#####-----]  50%  500/1000 rows  250 rows/s  ETA 0:02  Person`.
    public static func barLine(_ progress: ConversionProgress, elapsed: TimeInterval, width: Int = 30) -> String {
        let fraction = progress.total == 0 ? 1 : Double(progress.copied) / Double(progress.total)
        let filled = Int((fraction * Double(width)).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let rate = elapsed > 0 ? Double(progress.copied) / elapsed : 0
        let eta: String
        if rate > 0 {
            let seconds = Int((Double(progress.total - progress.copied) / rate).rounded(.up))
            eta = String(format: "%d:%02d", seconds / 60, seconds % 60)
        } else {
            eta = "--:--"
        }
        let percent = String(format: "%3d%%", Int(fraction * 100))
        return
            "[\(bar)] \(percent)  \(progress.copied)/\(progress.total) rows  \(Int(rate)) rows/s  ETA \(eta)  \(progress.entity)"
    }
}
