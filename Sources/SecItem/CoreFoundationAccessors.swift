// The Core Foundation functions and constants Keychain code calls around the SecItem functions: CF type
// identity (CFEqual, CFHash, CFCopyDescription), CFBundle's Info.plist keys, and the CFDictionary, CFArray
// and CFData accessors, with Apple's Swift types (CFBase.h, CFBundle.h, CFDictionary.h, CFArray.h, CFData.h).

public import Foundation
import SecureStoreCore

/// `CFHashCode`.
public typealias CFHashCode = UInt
/// `CFNull` is `NSNull`.
public typealias CFNull = NSNull
/// `kCFNull` (implicitly unwrapped, as in Apple's Swift overlay).
nonisolated(unsafe) public let kCFNull: CFNull! = NSNull()

// MARK: CFBase.h: type identity

/// `CFEqual`: `isEqual(_:)`, as for the toll-free bridged classes on Apple platforms.
public func CFEqual(_ cf1: CFTypeRef!, _ cf2: CFTypeRef!) -> Bool {
    guard let cf1, let cf2 else { return cf1 == nil && cf2 == nil }
    if cf1 === cf2 { return true }
    guard let a = cf1 as? NSObject else { return false }
    return a.isEqual(cf2)
}

/// `CFHash`: the object's `hash`, so that `CFEqual` objects hash alike.
public func CFHash(_ cf: CFTypeRef!) -> CFHashCode {
    guard let object = cf as? NSObject else { return cf.map { CFHashCode(bitPattern: ObjectIdentifier($0).hashValue) } ?? 0 }
    return CFHashCode(bitPattern: object.hash)
}

/// `CFCopyDescription`: the object's `description`.
public func CFCopyDescription(_ cf: CFTypeRef!) -> CFString! {
    guard let cf else { return nil }
    return NSString(string: (cf as? NSObject)?.description ?? "\(cf)")
}

/// `CFRetain` is unavailable in Swift on Apple platforms too.
@available(*, unavailable, message: "Core Foundation objects are automatically memory managed")
public func CFRetain(_ cf: CFTypeRef!) -> CFTypeRef! { cf }
/// `CFRelease` is unavailable in Swift on Apple platforms too.
@available(*, unavailable, message: "Core Foundation objects are automatically memory managed")
public func CFRelease(_ cf: CFTypeRef!) {}

// MARK: CFBundle.h: the standard Info.plist keys

/// `kCFBundleInfoDictionaryVersionKey`.
nonisolated(unsafe) public let kCFBundleInfoDictionaryVersionKey: CFString! = NSString(string: "CFBundleInfoDictionaryVersion")
/// `kCFBundleExecutableKey`.
nonisolated(unsafe) public let kCFBundleExecutableKey: CFString! = NSString(string: "CFBundleExecutable")
/// `kCFBundleIdentifierKey` (`Bundle.main.infoDictionary?[String(kCFBundleIdentifierKey)]`: nil for a bare Linux
/// executable until an Info.plist with CFBundleIdentifier sits beside it).
nonisolated(unsafe) public let kCFBundleIdentifierKey: CFString! = NSString(string: "CFBundleIdentifier")
/// `kCFBundleVersionKey`.
nonisolated(unsafe) public let kCFBundleVersionKey: CFString! = NSString(string: "CFBundleVersion")
/// `kCFBundleDevelopmentRegionKey`.
nonisolated(unsafe) public let kCFBundleDevelopmentRegionKey: CFString! = NSString(string: "CFBundleDevelopmentRegion")
/// `kCFBundleNameKey`.
nonisolated(unsafe) public let kCFBundleNameKey: CFString! = NSString(string: "CFBundleName")
/// `kCFBundleLocalizationsKey`.
nonisolated(unsafe) public let kCFBundleLocalizationsKey: CFString! = NSString(string: "CFBundleLocalizations")

// MARK: CFDictionary.h, CFArray.h, CFData.h

/// Objects handed out by pointer (`CFDictionaryGetValue`, `CFArrayGetValueAtIndex`), kept alive as long as the
/// container they came from. Foundation on Linux stores a Swift `String` or `Data` value and bridges it anew
/// at each access, so the object behind the pointer must be held somewhere: here, as Apple's container holds it
/// ("Get" rule: valid while the container lives and holds the value).
private final class HandedOut {
    weak var container: AnyObject?
    var byKey: [AnyHashable: AnyObject] = [:]
    var replaced: [AnyObject] = []

    init(_ container: AnyObject) { self.container = container }
}

private struct HandedOutTable {
    var holders: [ObjectIdentifier: HandedOut] = [:]
    var purgeAt = 64
}

private let handedOut = Locked(HandedOutTable())

/// The object for `value` (found under `key` in `container`) that stays alive as long as `container` does.
private func retained(_ value: Any, key: AnyHashable, in container: AnyObject) -> AnyObject {
    let fresh = objectForm(value) ?? (value as AnyObject)
    return handedOut.withLock { table in
        let id = ObjectIdentifier(container)
        let holder: HandedOut
        if let existing = table.holders[id], existing.container === container {
            holder = existing
        } else {
            if table.holders.count >= table.purgeAt {
                table.holders = table.holders.filter { $0.value.container != nil }
                table.purgeAt = max(64, table.holders.count * 2)
            }
            holder = HandedOut(container)
            table.holders[id] = holder
        }
        if let previous = holder.byKey[key] {
            if let p = previous as? NSObject, p.isEqual(fresh) { return previous }
            holder.replaced.append(previous)   // the container changed; a caller may still hold the old pointer
        }
        holder.byKey[key] = fresh
        return fresh
    }
}

/// `CFDictionaryGetCount`.
public func CFDictionaryGetCount(_ theDict: CFDictionary!) -> CFIndex { theDict?.count ?? 0 }

/// The object behind a key pointer (`Unmanaged.passUnretained(kSecValueData).toOpaque()`).
private func keyObject(_ key: UnsafeRawPointer) -> AnyObject {
    Unmanaged<AnyObject>.fromOpaque(key).takeUnretainedValue()
}

/// `CFDictionaryContainsKey`: `key` is an object pointer, as Keychain code passes it
/// (`Unmanaged.passUnretained(kSecAttrAccount).toOpaque()`).
public func CFDictionaryContainsKey(_ theDict: CFDictionary!, _ key: UnsafeRawPointer!) -> Bool {
    guard let theDict, let key else { return false }
    return theDict.object(forKey: keyObject(key)) != nil
}

/// `CFDictionaryGetValue`: the value's object pointer (`Unmanaged<CFData>.fromOpaque(p).takeUnretainedValue()`),
/// valid while the dictionary lives; nil when the key is absent.
public func CFDictionaryGetValue(_ theDict: CFDictionary!, _ key: UnsafeRawPointer!) -> UnsafeRawPointer! {
    guard let theDict, let key else { return nil }
    let k = keyObject(key)
    guard let value = theDict.object(forKey: k) else { return nil }
    let hashableKey: AnyHashable = (k as? NSObject).map { AnyHashable($0) } ?? AnyHashable(ObjectIdentifier(k))
    return UnsafeRawPointer(Unmanaged.passUnretained(retained(value, key: hashableKey, in: theDict)).toOpaque())
}

/// `CFArrayGetCount`.
public func CFArrayGetCount(_ theArray: CFArray!) -> CFIndex { theArray?.count ?? 0 }

/// `CFArrayGetValueAtIndex`: the element's object pointer, valid while the array lives. An index out of range
/// is a programming error on Apple platforms (undefined behaviour); here it returns nil.
public func CFArrayGetValueAtIndex(_ theArray: CFArray!, _ idx: CFIndex) -> UnsafeRawPointer! {
    guard let theArray, idx >= 0, idx < theArray.count else { return nil }
    return UnsafeRawPointer(Unmanaged.passUnretained(retained(theArray.object(at: idx), key: AnyHashable(idx), in: theArray)).toOpaque())
}

/// `CFDataGetLength`.
public func CFDataGetLength(_ theData: CFData!) -> CFIndex { theData?.length ?? 0 }

/// `CFDataGetBytePtr`: the data's bytes, valid while the data object lives.
public func CFDataGetBytePtr(_ theData: CFData!) -> UnsafePointer<UInt8>! {
    guard let theData, theData.length > 0 else { return nil }
    return theData.bytes.assumingMemoryBound(to: UInt8.self)
}

/// `CFDataCreate`: a copy of `length` bytes.
public func CFDataCreate(_ allocator: CFAllocator!, _ bytes: UnsafePointer<UInt8>!, _ length: CFIndex) -> CFData! {
    guard length > 0, let bytes else { return NSData() }
    return NSData(bytes: bytes, length: length)
}
