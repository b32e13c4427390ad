// SecAccessControl.h: access control objects for kSecAttrAccessControl.
//
// What Linux can honour: the protection class (a kSecAttrAccessible value), stored as the item's
// kSecAttrAccessible. What it cannot: constraints that need a person (user presence, biometry, device
// passcode, a paired watch) or an application password. SecAccessControlCreateWithFlags makes the object for
// any valid combination, as on Apple platforms (wrappers build one while building a query they may never
// send); SecItemAdd and SecItemUpdate refuse one that carries such a constraint with errSecUnimplemented
// and store nothing, rather than keep the item with less protection than was asked for.

public import Foundation

/// `SecAccessControlCreateFlags` (Apple's bit values).
public struct SecAccessControlCreateFlags: OptionSet, Sendable, Hashable {
    public let rawValue: CFOptionFlags
    public init(rawValue: CFOptionFlags) { self.rawValue = rawValue }

    public static let userPresence = SecAccessControlCreateFlags(rawValue: 1 << 0)
    public static let biometryAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    @available(*, deprecated, renamed: "biometryAny")
    public static let touchIDAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    public static let biometryCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    @available(*, deprecated, renamed: "biometryCurrentSet")
    public static let touchIDCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    public static let devicePasscode = SecAccessControlCreateFlags(rawValue: 1 << 4)
    public static let watch = SecAccessControlCreateFlags(rawValue: 1 << 5)
    public static let companion = SecAccessControlCreateFlags(rawValue: 1 << 5)
    public static let or = SecAccessControlCreateFlags(rawValue: 1 << 14)
    public static let and = SecAccessControlCreateFlags(rawValue: 1 << 15)
    public static let privateKeyUsage = SecAccessControlCreateFlags(rawValue: 1 << 30)
    public static let applicationPassword = SecAccessControlCreateFlags(rawValue: 1 << 31)

    /// Every bit Apple defines.
    static let known: SecAccessControlCreateFlags = [.userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode,
                                                     .watch, .or, .and, .privateKeyUsage, .applicationPassword]
    /// The bits that need a person or an application password at each use: Linux cannot verify them.
    static let needsUser: SecAccessControlCreateFlags = [.userPresence, .biometryAny, .biometryCurrentSet,
                                                         .devicePasscode, .watch, .applicationPassword]
}

/// An access control object (`SecAccessControlRef`): a protection class and constraint flags. Immutable.
///
/// As every Core Foundation type on Apple platforms, it is `Hashable`, `Equatable` (two objects with the same
/// protection and flags are equal, as `CFEqual` finds them) and `CustomStringConvertible`, so it fits in a
/// `[String: AnyHashable]` query.
public final class SecAccessControl: NSObject, @unchecked Sendable {
    /// The protection class: one of the kSecAttrAccessible values (`"ak"`, `"cku"`, …).
    let protection: String
    let flags: SecAccessControlCreateFlags

    init(protection: String, flags: SecAccessControlCreateFlags) {
        self.protection = protection
        self.flags = flags
        super.init()
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? SecAccessControl else { return false }
        return other.protection == protection && other.flags == flags
    }

    public override var hash: Int { protection.hashValue ^ Int(truncatingIfNeeded: flags.rawValue) }

    /// The constraints that Linux cannot honour (empty when the object only names a protection class).
    var unsupportedConstraints: SecAccessControlCreateFlags { flags.intersection(.needsUser) }

    public override var description: String { "<SecAccessControl protection: \(protection), flags: 0x\(String(flags.rawValue, radix: 16))>" }
}

/// `SecAccessControlGetTypeID`.
public func SecAccessControlGetTypeID() -> CFTypeID { TypeIDs.accessControl }

/// The kSecAttrAccessible values a protection may name.
let accessibleValues: Set<String> = ["ak", "ck", "dk", "aku", "cku", "dku", "akpu"]

/// Creates an access control object (Apple's `SecAccessControlCreateWithFlags`).
/// - Parameters:
///   - allocator: ignored.
///   - protection: one of the `kSecAttrAccessible…` constants.
///   - flags: constraints; any combination of Apple's bits.
///   - error: receives a `CFError` (domain `NSOSStatusErrorDomain`, code `errSecParam`) on failure.
/// - Returns: the object, or nil when `protection` is not a kSecAttrAccessible value or `flags` has a bit
///   Apple does not define.
public func SecAccessControlCreateWithFlags(_ allocator: CFAllocator?, _ protection: CFTypeRef,
                                            _ flags: SecAccessControlCreateFlags,
                                            _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> SecAccessControl? {
    func failure(_ reason: String) -> SecAccessControl? {
        error?.pointee = Unmanaged.passRetained(NSError(domain: kCFErrorDomainOSStatus as String, code: Int(errSecParam),
                                                        userInfo: [NSLocalizedDescriptionKey: reason]))
        return nil
    }
    guard let name = protection as? String, accessibleValues.contains(name) else {
        return failure("SecAccessControlCreateWithFlags: the protection must be one of the kSecAttrAccessible constants.")
    }
    guard flags.isSubset(of: .known) else {
        return failure("SecAccessControlCreateWithFlags: flags 0x\(String(flags.subtracting(.known).rawValue, radix: 16)) are not SecAccessControlCreateFlags.")
    }
    return SecAccessControl(protection: name, flags: flags)
}
