import Foundation

/// Something an exercise found that must never happen (a crash is the other kind of finding).
public struct FuzzFinding: Error, CustomStringConvertible, Sendable {
    public let harness: String
    public let message: String

    public init(_ harness: String, _ message: String) {
        self.harness = harness
        self.message = message
    }

    public var description: String { "[\(harness)] \(message)" }
}

/// Reads structured choices from fuzz bytes; when the bytes run out every read returns zero / empty, so any
/// input is a valid program.
struct FuzzInput {
    let bytes: [UInt8]
    var at = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isEmpty: Bool { at >= bytes.count }

    mutating func byte() -> UInt8 {
        guard at < bytes.count else { return 0 }
        defer { at += 1 }
        return bytes[at]
    }

    /// A number in `0..<n` (n > 0).
    mutating func choose(_ n: Int) -> Int { Int(byte()) % n }

    mutating func pick<T>(_ options: [T]) -> T { options[choose(options.count)] }

    mutating func bool() -> Bool { byte() & 1 == 1 }

    mutating func u16() -> UInt16 { UInt16(byte()) << 8 | UInt16(byte()) }

    mutating func i64() -> Int64 {
        var n: UInt64 = 0
        for _ in 0..<8 { n = n << 8 | UInt64(byte()) }
        return Int64(bitPattern: n)
    }

    /// Up to `max` raw bytes, length-prefixed by one byte.
    mutating func chunk(max: Int = 64) -> [UInt8] {
        let n = min(Int(byte()), max, bytes.count - min(at, bytes.count))
        defer { at += n }
        return Array(bytes[at..<at + n])
    }
}
