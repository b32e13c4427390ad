import Foundation

/// The `NSData` the SecItem functions hand back for a secret, a persistent reference or a data attribute.
///
/// An immutable `NSData` that owns one buffer (zeroed when freed) and also reads as `ContiguousBytes`.
/// Foundation on Linux turns an `NSData` into `Data` (`result as? Data`, `as! CFData as Data`, a value of
/// `as? [String: Any]`) through `Data.init(_: Sequence)`, which copies a `ContiguousBytes` with one
/// `memcpy` and anything else one byte at a time; this class takes the first path, so a caller's bridge
/// costs one copy whatever the size. Everything else is `NSData`'s own behaviour over `bytes`/`length`:
/// `copy()` returns the same immutable object, `mutableCopy()` a separate `NSMutableData`, and an archive
/// records it as a plain `NSData`.
final class SecItemData: NSData, ContiguousBytes {
    private let base: UnsafeMutableRawPointer
    private let count: Int

    /// A copy of `data`'s bytes.
    init(_ data: Data) {
        let count = data.count
        let base = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(count, 1), alignment: 16)
        if count > 0 {
            data.withUnsafeBytes { source in
                if let bytes = source.baseAddress { base.copyMemory(from: bytes, byteCount: count) }
            }
        }
        self.base = base
        self.count = count
        super.init()
    }

    /// Never decoded as this class: archives record it as `NSData` (``classForCoder``).
    required init?(coder: NSCoder) {
        return nil
    }

    deinit {
        memset(base, 0, count)
        base.deallocate()
    }

    override var length: Int { count }

    override var bytes: UnsafeRawPointer { UnsafeRawPointer(base) }

    override var classForCoder: AnyClass { NSData.self }

    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }
}
