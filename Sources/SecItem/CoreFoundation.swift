// The Core Foundation names Keychain code uses, as the classes Foundation has on Linux. On Apple platforms
// CFString, CFDictionary, CFData, … are toll-free bridged to NSString, NSDictionary, NSData, …; here they
// are those classes, so `kSecClass as String`, `query as CFDictionary`, `result as? Data`,
// `result as! CFData as Data` and `kSecClassGenericPassword as AnyObject` compile and work as on iOS.

public import Foundation

/// `CFTypeRef`: any Core Foundation object.
public typealias CFTypeRef = AnyObject
/// `CFString` is `NSString` (toll-free bridged on Apple platforms).
public typealias CFString = NSString
/// `CFMutableString` is `NSMutableString`.
public typealias CFMutableString = NSMutableString
/// `CFDictionary` is `NSDictionary`.
public typealias CFDictionary = NSDictionary
/// `CFMutableDictionary` is `NSMutableDictionary`.
public typealias CFMutableDictionary = NSMutableDictionary
/// `CFData` is `NSData`.
public typealias CFData = NSData
/// `CFMutableData` is `NSMutableData`.
public typealias CFMutableData = NSMutableData
/// `CFArray` is `NSArray`.
public typealias CFArray = NSArray
/// `CFMutableArray` is `NSMutableArray`.
public typealias CFMutableArray = NSMutableArray
/// `CFNumber` is `NSNumber`.
public typealias CFNumber = NSNumber
/// `CFBoolean` is `NSNumber` (`kCFBooleanTrue` / `kCFBooleanFalse`).
public typealias CFBoolean = NSNumber
/// `CFDate` is `NSDate`.
public typealias CFDate = NSDate
/// `CFError` is `NSError` (toll-free bridged on Apple platforms), so `error as Error` works.
public typealias CFError = NSError
/// `CFErrorDomain` is a `CFString`.
public typealias CFErrorDomain = CFString
/// `CFIndex`: Core Foundation's signed size.
public typealias CFIndex = Int
/// `CFOptionFlags`: Core Foundation's option bits.
public typealias CFOptionFlags = UInt
/// `CFTypeID`: what `CFGetTypeID` returns.
public typealias CFTypeID = UInt
/// `OSStatus`: Apple's status type.
public typealias OSStatus = Int32

/// `CFAllocator`. Every allocator argument is accepted and ignored: Swift manages memory here. Like every CF
/// type on Apple platforms, `Hashable` (by identity) and `CustomStringConvertible`.
public final class CFAllocator: NSObject, @unchecked Sendable {   // no state
    override init() { super.init() }
}
/// `kCFAllocatorDefault` (NULL in C, as on Apple platforms).
public let kCFAllocatorDefault: CFAllocator! = nil
/// `kCFAllocatorSystemDefault`.
public let kCFAllocatorSystemDefault: CFAllocator! = CFAllocator()

/// `kCFBooleanTrue` / `kCFBooleanFalse` (implicitly unwrapped, as in Apple's Swift overlay).
public let kCFBooleanTrue: CFBoolean! = NSNumber(value: true)
public let kCFBooleanFalse: CFBoolean! = NSNumber(value: false)
/// `noErr`.
public let noErr: OSStatus = 0

/// `CFBooleanGetValue`.
public func CFBooleanGetValue(_ boolean: CFBoolean!) -> Bool { boolean?.boolValue ?? false }

// MARK: CFError

/// `kCFErrorDomainOSStatus`: the domain of errors whose code is an `OSStatus` (the Security framework's).
nonisolated(unsafe) public let kCFErrorDomainOSStatus: CFErrorDomain = "NSOSStatusErrorDomain"
/// `kCFErrorDescriptionKey` (`NSLocalizedDescriptionKey`).
nonisolated(unsafe) public let kCFErrorDescriptionKey: CFString = NSLocalizedDescriptionKey as NSString
/// `kCFErrorLocalizedFailureReasonKey` (`NSLocalizedFailureReasonErrorKey`).
nonisolated(unsafe) public let kCFErrorLocalizedFailureReasonKey: CFString = NSLocalizedFailureReasonErrorKey as NSString

/// `CFErrorCreate`.
public func CFErrorCreate(_ allocator: CFAllocator?, _ domain: CFErrorDomain!, _ code: CFIndex,
                          _ userInfo: CFDictionary!) -> CFError! {
    var info: [String: Any] = [:]
    for (key, value) in userInfo ?? [:] { if let k = key as? String { info[k] = value } }
    return NSError(domain: (domain ?? "") as String, code: code, userInfo: info)
}
/// `CFErrorGetDomain`.
public func CFErrorGetDomain(_ err: CFError!) -> CFErrorDomain! { err.map { $0.domain as NSString } }
/// `CFErrorGetCode`.
public func CFErrorGetCode(_ err: CFError!) -> CFIndex { err?.code ?? 0 }
/// `CFErrorCopyUserInfo`.
public func CFErrorCopyUserInfo(_ err: CFError!) -> CFDictionary! { err.map { $0.userInfo as NSDictionary } }
/// `CFErrorCopyDescription`.
public func CFErrorCopyDescription(_ err: CFError!) -> CFString! { err.map { $0.localizedDescription as NSString } }
/// `CFErrorCopyFailureReason`.
public func CFErrorCopyFailureReason(_ err: CFError!) -> CFString! {
    err?.localizedFailureReason.map { $0 as NSString }
}

// MARK: Type identifiers

/// Type identifiers for `CFGetTypeID(x) == CFDataGetTypeID()` checks. The numbers are this module's own
/// (Apple assigns them at run time); only equality between them has meaning.
enum TypeIDs {
    static let string: CFTypeID = 7
    static let dictionary: CFTypeID = 18
    static let array: CFTypeID = 19
    static let data: CFTypeID = 20
    static let boolean: CFTypeID = 21
    static let number: CFTypeID = 22
    static let date: CFTypeID = 42
    static let error: CFTypeID = 43
    static let null: CFTypeID = 16
    static let set: CFTypeID = 17
    static let accessControl: CFTypeID = 300
    static let key: CFTypeID = 301
    static let certificate: CFTypeID = 302
    static let identity: CFTypeID = 303
    static let policy: CFTypeID = 304
    static let other: CFTypeID = 1
}

/// `CFGetTypeID`: which of the Core Foundation types above `cf` is.
public func CFGetTypeID(_ cf: CFTypeRef!) -> CFTypeID {
    guard let cf else { return TypeIDs.other }
    switch cf {
    case is SecAccessControl: return TypeIDs.accessControl
    case is SecKey: return TypeIDs.key
    case is SecCertificate: return TypeIDs.certificate
    case is SecIdentity: return TypeIDs.identity
    case is SecPolicy: return TypeIDs.policy
    case let n as NSNumber: return NumberKind(n).isBool ? TypeIDs.boolean : TypeIDs.number
    case is NSString: return TypeIDs.string
    case is NSData: return TypeIDs.data
    case is NSDictionary: return TypeIDs.dictionary
    case is NSSet: return TypeIDs.set
    case is NSArray: return TypeIDs.array
    case is NSDate: return TypeIDs.date
    case is NSError: return TypeIDs.error
    case is NSNull: return TypeIDs.null
    default: return TypeIDs.other
    }
}
public func CFStringGetTypeID() -> CFTypeID { TypeIDs.string }
public func CFDictionaryGetTypeID() -> CFTypeID { TypeIDs.dictionary }
public func CFArrayGetTypeID() -> CFTypeID { TypeIDs.array }
public func CFDataGetTypeID() -> CFTypeID { TypeIDs.data }
public func CFBooleanGetTypeID() -> CFTypeID { TypeIDs.boolean }
public func CFNumberGetTypeID() -> CFTypeID { TypeIDs.number }
public func CFDateGetTypeID() -> CFTypeID { TypeIDs.date }
public func CFErrorGetTypeID() -> CFTypeID { TypeIDs.error }
public func CFNullGetTypeID() -> CFTypeID { TypeIDs.null }

/// What an `NSNumber` holds. Foundation on Linux keeps booleans as `NSNumber`s of Objective-C type `c`
/// (shared with `Int8`), so a `c` number is a boolean only when it is 0 or 1.
enum NumberKind {
    case bool(Bool)
    case integer(Int64)
    case fraction(Double)
    case outOfRange

    init(_ n: NSNumber) {
        let type = String(cString: n.objCType)
        switch type {
        case "c", "B":
            let v = n.int64Value
            self = v == 0 || v == 1 ? .bool(v == 1) : .integer(v)
        case "f", "d":
            let d = n.doubleValue
            if let i = Int64(exactly: d) { self = .integer(i) } else { self = .fraction(d) }
        case "Q", "L":
            let u = n.uint64Value
            if let i = Int64(exactly: u) { self = .integer(i) } else { self = .outOfRange }
        default:
            self = .integer(n.int64Value)
        }
    }

    var isBool: Bool { if case .bool = self { true } else { false } }
}
