/// The five keychain item classes, with Apple's `kSecClass…` string values as raw values.
public enum ItemClass: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    case genericPassword = "genp"
    case internetPassword = "inet"
    case certificate = "cert"
    case key = "keys"
    case identity = "idnt"

    public var description: String {
        switch self {
        case .genericPassword: "generic password"
        case .internetPassword: "internet password"
        case .certificate: "certificate"
        case .key: "key"
        case .identity: "identity"
        }
    }

    /// The description with its indefinite article: "a generic password", "an internet password".
    public var withArticle: String {
        switch self {
        case .internetPassword, .identity: "an \(description)"
        default: "a \(description)"
        }
    }

    /// The class named by Apple's value (`"genp"`) or by a friendly name (`"generic"`).
    public init?(name: String) {
        if let c = ItemClass(rawValue: name) { self = c; return }
        switch name.lowercased() {
        case "generic", "generic-password", "genericpassword": self = .genericPassword
        case "internet", "internet-password", "internetpassword": self = .internetPassword
        case "certificate", "cert": self = .certificate
        case "key", "keys": self = .key
        case "identity": self = .identity
        default: return nil
        }
    }

    /// The attributes this class defines (an attribute outside this set gives errSecNoSuchAttr).
    public var attributes: Set<AttributeName> { AttributeName.attributes(of: self) }

    /// Whether this class defines `name`: `attributes.contains(name)` without hashing.
    public func defines(_ name: AttributeName) -> Bool { definedAttributes.contains(name) }

    /// ``attributes`` as bits (one word, read once for a loop over many names).
    var definedAttributes: AttributeBits { AttributeName.definedBits(of: self) }

    /// The attributes that together make an item unique within this class, in a fixed order.
    public var uniquenessKey: [AttributeName] { AttributeName.uniqueness(of: self) }

    /// Whether `name` is one of ``uniquenessKey`` other than access group and synchronizable (whose values a
    /// query may leave to the store's defaults): one AND, no hashing.
    func hasInKey(_ name: AttributeName) -> Bool { keyAttributesButGroupAndSync.contains(name) }

    /// ``uniquenessKey`` but access group and synchronizable, as bits.
    var keyAttributesButGroupAndSync: AttributeBits { AttributeName.keyBitsButGroupAndSync(of: self) }

    /// How many of ``uniquenessKey`` are neither access group nor synchronizable.
    var keyAttributeCountButGroupAndSync: Int { keyAttributesButGroupAndSync.count }

    /// Accessibility used when an add does not say: `ak` (WhenUnlocked), `dk` for certificates.
    public var defaultAccessibility: Accessibility {
        self == .certificate ? .always : .whenUnlocked
    }
}

/// `kSecAttrAccessible` values (stored and matchable; no lock state is enforced on Linux).
public enum Accessibility: String, Sendable, CaseIterable, Codable {
    case whenUnlocked = "ak"
    case afterFirstUnlock = "ck"
    case always = "dk"
    case whenPasscodeSetThisDeviceOnly = "akpu"
    case whenUnlockedThisDeviceOnly = "aku"
    case afterFirstUnlockThisDeviceOnly = "cku"
    case alwaysThisDeviceOnly = "dku"
}

/// A set of attribute names as one word, a bit per name: `contains` is one AND (no hashing), on every attribute
/// of every add, query and update.
struct AttributeBits {
    let raw: UInt64
    func contains(_ name: AttributeName) -> Bool { name.isIn(raw) }
    var count: Int { raw.nonzeroBitCount }
}
