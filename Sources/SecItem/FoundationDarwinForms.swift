// Darwin's forms of the Foundation calls Keychain code makes, where Foundation on Linux differs and the Darwin
// form can be given soundly from this module (PortingKeychainCode.md lists the differences that cannot).

public import Foundation

/// The Foundation object Darwin's bridging makes of a Swift value (`String` → `NSString`, `Data` → `NSData`,
/// numbers and `Bool` → `NSNumber`, arrays and dictionaries → `NSArray` / `NSDictionary`); an object as it
/// is; nil for nil (an `Optional` is unwrapped first, as Darwin's bridge does).
func objectForm(_ value: Any) -> NSObject? {
    guard let value = SecItemDecoder.unwrap(value) else { return nil }
    switch value {
    case let object as NSObject: return object
    case let s as String: return NSString(string: s)
    case let d as Data: return NSData(data: d)
    case let d as Date: return NSDate(timeIntervalSinceReferenceDate: d.timeIntervalSinceReferenceDate)
    case let b as Bool: return NSNumber(value: b)
    case let n as Int: return NSNumber(value: n)
    case let n as Int8: return NSNumber(value: n)
    case let n as Int16: return NSNumber(value: n)
    case let n as Int32: return NSNumber(value: n)
    case let n as Int64: return NSNumber(value: n)
    case let n as UInt: return NSNumber(value: n)
    case let n as UInt8: return NSNumber(value: n)
    case let n as UInt16: return NSNumber(value: n)
    case let n as UInt32: return NSNumber(value: n)
    case let n as UInt64: return NSNumber(value: n)
    case let n as Double: return NSNumber(value: n)
    case let n as Float: return NSNumber(value: n)
    case let array as [Any]:
        return NSArray(array: array.map { objectForm($0) ?? NSNull() })
    case let dict as [AnyHashable: Any]:
        let result = NSMutableDictionary()
        for (key, element) in dict {
            guard let k = objectForm(key.base) else { continue }
            result.setObject(objectForm(element) ?? NSNull(), forKey: k as AnyHashable)
        }
        return result
    default:
        return value as AnyObject as? NSObject
    }
}

extension NSMutableDictionary {
    /// Darwin's `setObject(_:forKey:)`, whose key is `NSCopying` (Foundation on Linux takes `AnyHashable`):
    /// `q.setObject(kSecClassGenericPassword, forKey: kSecClass as! NSCopying)` compiles and stores under
    /// the key's copy, as on Darwin.
    public func setObject(_ anObject: Any, forKey aKey: any NSCopying) {
        let copy = aKey.copy(with: nil)
        if let object = objectForm(copy) {
            setObject(anObject, forKey: object as AnyHashable)
        } else if let hashable = copy as? AnyHashable {
            setObject(anObject, forKey: hashable)
        } else {
            setObject(anObject, forKey: NSString(string: String(describing: copy)) as AnyHashable)
        }
    }
}

extension NSDictionary {
    /// Darwin's `isEqual(to:)` for a Swift `[String: Any]`: values compare as the Foundation objects Darwin
    /// bridges them to (`"svc"` equals the `NSString` `"svc"`, `true` equals `kCFBooleanTrue`). Foundation on
    /// Linux compares a `String` and an `NSString` as unequal `AnyHashable`s.
    public func isEqual(to otherDictionary: [String: Any]) -> Bool {
        guard count == otherDictionary.count else { return false }
        for (key, otherValue) in otherDictionary {
            guard let value = object(forKey: NSString(string: key)) else { return false }
            guard let a = objectForm(value), let b = objectForm(otherValue) else {
                if objectForm(value) == nil && objectForm(otherValue) == nil { continue }
                return false
            }
            if !a.isEqual(b) { return false }
        }
        return true
    }
}

extension NSError {
    /// Darwin's `NSError()`, which Darwin inherits from `NSObject` (Foundation on Linux has no `init()` for
    /// `NSError`): an error with the empty domain and code 0. Keychain code makes one as a placeholder before
    /// the real error is known. (`init()` cannot be added to a Foundation class from outside; this initializer's
    /// only parameter has a default, so `NSError()` calls it.)
    public convenience init(_: Void = ()) {
        self.init(domain: "", code: 0, userInfo: nil)
    }
}
