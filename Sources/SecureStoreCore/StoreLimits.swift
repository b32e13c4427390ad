/// The largest values a store accepts, the same for every backend (checked once, in ``Keychain``).
///
/// A secret (`kSecValueData`) may hold at most ``maxSecretBytes`` bytes and a text or data attribute value
/// at most ``maxAttributeValueBytes`` bytes (UTF-8 for text). An add or update over a limit fails with
/// `errSecParam` naming the attribute (`v_Data` for the secret) and the limit, and stores nothing.
public enum StoreLimits {
    /// 1 MiB: the largest secret.
    public static let maxSecretBytes = 1 << 20
    /// 16 KiB: the largest text or data attribute value (labels, accounts, tags, certificate fields…).
    public static let maxAttributeValueBytes = 16 << 10

    /// Throws `param` naming `data` when `data` is over ``maxSecretBytes``.
    static func checkSecret(_ count: Int) throws(SecureStoreError) {
        guard count <= maxSecretBytes else {
            throw .param("data", "The secret (kSecValueData) is \(count) bytes; the limit is \(maxSecretBytes) bytes "
                + "(StoreLimits.maxSecretBytes). Nothing was stored.")
        }
    }

    /// Throws `param` naming the attribute when its value is over ``maxAttributeValueBytes``.
    static func checkAttribute(_ name: AttributeName, _ value: AttributeValue) throws(SecureStoreError) {
        guard let count = value.byteCount, count > maxAttributeValueBytes else { return }
        throw .param(name.code, "The value of \(name.name) (\(name.code)) is \(count) bytes; the limit for an attribute "
            + "value is \(maxAttributeValueBytes) bytes (StoreLimits.maxAttributeValueBytes). Nothing was stored.")
    }
}

extension AttributeValue {
    /// The size of a text (UTF-8) or data value; nil for numbers, flags and dates.
    var byteCount: Int? {
        switch self {
        case .string(let s): s.utf8.count
        case .data(let d): d.count
        default: nil
        }
    }
}
