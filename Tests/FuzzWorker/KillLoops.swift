import Foundation

enum KillLoops {
    static func run(_ loop: String, driver: String, path: URL) throws {}
}
