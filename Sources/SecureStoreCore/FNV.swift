/// FNV-1a, 64 bits: a fast, stable (unseeded) hash of a few bytes, for values that must be the same in
/// every process (lock names, advisory lock keys) or cheap to compute (attribute names). Not for anything
/// an attacker chooses to collide.
package struct FNV1a {
    package private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    package init() {}

    package mutating func combine(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }

    package mutating func combine<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        for byte in bytes { combine(byte) }
    }

    /// The hash of `bytes`.
    package static func hash<Bytes: Sequence>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
        var h = FNV1a()
        h.combine(bytes)
        return h.value
    }
}
