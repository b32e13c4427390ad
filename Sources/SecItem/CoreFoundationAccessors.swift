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

// CFDictionary.h: a mutable dictionary made and filled the C way (`CFDictionaryCreateMutable`,
// `CFDictionarySetValue` with `Unmanaged` pointers), as Keychain code that avoids Swift's bridging writes it.

// Apple's retain, release and copy-description callbacks are C function pointers; here they are Swift function
// types, because a C function type cannot name `CFAllocator` (a Swift class here) or `Unmanaged`. A closure
// written for Apple's type (`{ _, value in value }`) converts to either.

/// `CFDictionaryRetainCallBack` (a Swift function type here, see above).
public typealias CFDictionaryRetainCallBack = @Sendable (CFAllocator?, UnsafeRawPointer?) -> UnsafeRawPointer?
/// `CFDictionaryReleaseCallBack` (a Swift function type here, see above).
public typealias CFDictionaryReleaseCallBack = @Sendable (CFAllocator?, UnsafeRawPointer?) -> Void
/// `CFDictionaryCopyDescriptionCallBack` (a Swift function type here, see above).
public typealias CFDictionaryCopyDescriptionCallBack = @Sendable (UnsafeRawPointer?) -> Unmanaged<CFString>?
/// `CFDictionaryEqualCallBack`. Apple's returns `DarwinBoolean`, the Darwin overlay's type for C's `Boolean`, which
/// Linux does not have and a C function type cannot name; `Bool` takes the same `true` / `false` literals.
public typealias CFDictionaryEqualCallBack = @convention(c) (UnsafeRawPointer?, UnsafeRawPointer?) -> Bool
/// `CFDictionaryHashCallBack`.
public typealias CFDictionaryHashCallBack = @convention(c) (UnsafeRawPointer?) -> CFHashCode

/// `CFDictionaryKeyCallBacks`, with the members and initializers Apple's importer gives the C struct.
public struct CFDictionaryKeyCallBacks: Sendable {
    public var version: CFIndex
    public var retain: CFDictionaryRetainCallBack!
    public var release: CFDictionaryReleaseCallBack!
    public var copyDescription: CFDictionaryCopyDescriptionCallBack!
    public var equal: CFDictionaryEqualCallBack!
    public var hash: CFDictionaryHashCallBack!

    public init() { version = 0 }
    public init(version: CFIndex, retain: CFDictionaryRetainCallBack!, release: CFDictionaryReleaseCallBack!,
                copyDescription: CFDictionaryCopyDescriptionCallBack!, equal: CFDictionaryEqualCallBack!,
                hash: CFDictionaryHashCallBack!) {
        self.version = version
        self.retain = retain
        self.release = release
        self.copyDescription = copyDescription
        self.equal = equal
        self.hash = hash
    }
}

/// `CFDictionaryValueCallBacks`, with the members and initializers Apple's importer gives the C struct.
public struct CFDictionaryValueCallBacks: Sendable {
    public var version: CFIndex
    public var retain: CFDictionaryRetainCallBack!
    public var release: CFDictionaryReleaseCallBack!
    public var copyDescription: CFDictionaryCopyDescriptionCallBack!
    public var equal: CFDictionaryEqualCallBack!

    public init() { version = 0 }
    public init(version: CFIndex, retain: CFDictionaryRetainCallBack!, release: CFDictionaryReleaseCallBack!,
                copyDescription: CFDictionaryCopyDescriptionCallBack!, equal: CFDictionaryEqualCallBack!) {
        self.version = version
        self.retain = retain
        self.release = release
        self.copyDescription = copyDescription
        self.equal = equal
    }
}

// The CF-type callbacks: retain and release the object, describe, compare and hash it as CFEqual and CFHash do.
private let cfTypeRetain: CFDictionaryRetainCallBack = { _, p in
    guard let p else { return nil }
    return UnsafeRawPointer(Unmanaged<AnyObject>.fromOpaque(p).retain().toOpaque())
}
private let cfTypeRelease: CFDictionaryReleaseCallBack = { _, p in
    guard let p else { return }
    Unmanaged<AnyObject>.fromOpaque(p).release()
}
private let cfTypeCopyDescription: CFDictionaryCopyDescriptionCallBack = { p in
    guard let p else { return nil }
    return CFCopyDescription(Unmanaged<AnyObject>.fromOpaque(p).takeUnretainedValue()).map { Unmanaged.passRetained($0) }
}
private let cfTypeEqual: CFDictionaryEqualCallBack = { a, b in
    guard let a, let b else { return a == b }
    return CFEqual(Unmanaged<AnyObject>.fromOpaque(a).takeUnretainedValue(),
                   Unmanaged<AnyObject>.fromOpaque(b).takeUnretainedValue())
}
private let cfTypeHash: CFDictionaryHashCallBack = { p in
    guard let p else { return 0 }
    return CFHash(Unmanaged<AnyObject>.fromOpaque(p).takeUnretainedValue())
}
private let copyStringRetain: CFDictionaryRetainCallBack = { _, p in
    guard let p else { return nil }
    let object = Unmanaged<AnyObject>.fromOpaque(p).takeUnretainedValue()
    let copy: AnyObject = (object as? NSString)?.copy() as AnyObject? ?? object
    return UnsafeRawPointer(Unmanaged.passRetained(copy).toOpaque())
}

/// `kCFTypeDictionaryKeyCallBacks`: keys retained, compared with `CFEqual` and hashed with `CFHash`.
public let kCFTypeDictionaryKeyCallBacks = CFDictionaryKeyCallBacks(
    version: 0, retain: cfTypeRetain, release: cfTypeRelease, copyDescription: cfTypeCopyDescription,
    equal: cfTypeEqual, hash: cfTypeHash)
/// `kCFCopyStringDictionaryKeyCallBacks`: as `kCFTypeDictionaryKeyCallBacks`, but string keys are copied.
public let kCFCopyStringDictionaryKeyCallBacks = CFDictionaryKeyCallBacks(
    version: 0, retain: copyStringRetain, release: cfTypeRelease, copyDescription: cfTypeCopyDescription,
    equal: cfTypeEqual, hash: cfTypeHash)
/// `kCFTypeDictionaryValueCallBacks`: values retained and compared with `CFEqual`.
public let kCFTypeDictionaryValueCallBacks = CFDictionaryValueCallBacks(
    version: 0, retain: cfTypeRetain, release: cfTypeRelease, copyDescription: cfTypeCopyDescription,
    equal: cfTypeEqual)

/// `CFDictionaryCreateMutable`: an empty `NSMutableDictionary` (what `CFMutableDictionary` is here). Whatever
/// callbacks are given, the dictionary holds its keys (a copy, as `NSMutableDictionary` takes them) and values
/// and compares keys with `CFEqual`: what `kCFTypeDictionaryKeyCallBacks` / `kCFCopyStringDictionaryKeyCallBacks`
/// and `kCFTypeDictionaryValueCallBacks` mean. With NULL callbacks Apple's dictionary neither retains nor
/// compares by value; holding is never less safe, and a Keychain query's keys are strings compared by value.
public func CFDictionaryCreateMutable(_ allocator: CFAllocator!, _ capacity: CFIndex,
                                      _ keyCallBacks: UnsafePointer<CFDictionaryKeyCallBacks>!,
                                      _ valueCallBacks: UnsafePointer<CFDictionaryValueCallBacks>!) -> CFMutableDictionary! {
    NSMutableDictionary()
}

/// `CFDictionarySetValue`: `key` and `value` are object pointers, as Keychain code passes them
/// (`Unmanaged.passUnretained(kSecAttrAccount).toOpaque()`); the value replaces any under an equal key. A NULL
/// dictionary, key or value changes nothing (Apple's CF-type callbacks would crash on one).
public func CFDictionarySetValue(_ theDict: CFMutableDictionary!, _ key: UnsafeRawPointer!, _ value: UnsafeRawPointer!) {
    guard let theDict, let key, let value else { return }
    let k = keyObject(key)
    let v = keyObject(value)
    if let copying = k as? any NSCopying {
        theDict.setObject(v, forKey: copying)
    } else if let object = k as? NSObject {
        theDict.setObject(v, forKey: AnyHashable(object))
    }
}

/// `CFDictionaryGetKeysAndValues`: the keys' and values' object pointers, each array `CFDictionaryGetCount`
/// long (either may be NULL), valid while the dictionary lives; in the dictionary's own order, as Apple's.
public func CFDictionaryGetKeysAndValues(_ theDict: CFDictionary!, _ keys: UnsafeMutablePointer<UnsafeRawPointer?>!,
                                         _ values: UnsafeMutablePointer<UnsafeRawPointer?>!) {
    guard let theDict else { return }
    let allKeys = theDict.allKeys
    for (i, key) in allKeys.enumerated() {
        let k = retained(key, key: AnyHashable(KeyPosition(index: i)), in: theDict)
        keys?[i] = UnsafeRawPointer(Unmanaged.passUnretained(k).toOpaque())
        if let values, let value = theDict.object(forKey: k) {
            let hashable: AnyHashable = (k as? NSObject).map { AnyHashable($0) } ?? AnyHashable(ObjectIdentifier(k))
            values[i] = UnsafeRawPointer(Unmanaged.passUnretained(retained(value, key: hashable, in: theDict)).toOpaque())
        }
    }
}

/// The place of a key handed out by ``CFDictionaryGetKeysAndValues(_:_:_:)`` (kept apart from the values,
/// which are held by their key).
private struct KeyPosition: Hashable { let index: Int }

/// `CFArrayCreate`: an array of `numValues` object pointers (the C way: `Unmanaged.passUnretained(x).toOpaque()`),
/// held by the array whatever the callbacks (as ``CFDictionaryCreateMutable(_:_:_:_:)``); a NULL value is left out.
public func CFArrayCreate(_ allocator: CFAllocator!, _ values: UnsafeMutablePointer<UnsafeRawPointer?>!, _ numValues: CFIndex,
                          _ callBacks: UnsafePointer<CFArrayCallBacks>!) -> CFArray! {
    guard let values, numValues > 0 else { return NSArray() }
    return NSArray(array: (0..<numValues).compactMap { values[$0].map(keyObject) })
}

/// `CFArrayCreateMutable`: an empty mutable array (`capacity` is a hint here).
public func CFArrayCreateMutable(_ allocator: CFAllocator!, _ capacity: CFIndex,
                                 _ callBacks: UnsafePointer<CFArrayCallBacks>!) -> CFMutableArray! {
    NSMutableArray()
}

/// `CFArrayAppendValue`: `value` is an object pointer; a NULL one changes nothing.
public func CFArrayAppendValue(_ theArray: CFMutableArray!, _ value: UnsafeRawPointer!) {
    guard let theArray, let value else { return }
    theArray.add(keyObject(value))
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
