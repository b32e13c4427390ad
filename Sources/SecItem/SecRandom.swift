// SecRandom.h: cryptographically secure random bytes, from the kernel's generator (getrandom(2) through
// the standard library's SystemRandomNumberGenerator).

/// `SecRandomRef`: the generator to use; only the default exists.
public typealias SecRandomRef = OpaquePointer
/// `kSecRandomDefault` (NULL, as on Apple platforms).
nonisolated(unsafe) public let kSecRandomDefault: SecRandomRef? = nil

/// Fills `bytes` with `count` random bytes (Apple's `SecRandomCopyBytes`).
/// - Returns: `errSecSuccess`, or `errSecParam` when `count` is negative.
public func SecRandomCopyBytes(_ rnd: SecRandomRef?, _ count: Int, _ bytes: UnsafeMutableRawPointer) -> Int32 {
    guard count >= 0 else { return errSecParam }
    var generator = SystemRandomNumberGenerator()
    var offset = 0
    while offset < count {
        var word = generator.next()
        let n = min(8, count - offset)
        withUnsafeBytes(of: &word) {
            UnsafeMutableRawBufferPointer(start: bytes + offset, count: n).copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(n)))
        }
        word = 0
        offset += n
    }
    return errSecSuccess
}
