// The Core Foundation functions Keychain code calls to make and read the values it puts in a query or gets back
// (CFData, CFString, CFNumber, CFSet, a CFDictionary made in one call), with Apple's Swift types (CFBase.h,
// CFData.h, CFString.h, CFNumber.h, CFSet.h, CFDictionary.h). The objects are Foundation's, as the CF types are
// here (`CFData` is `NSData`, …), so what these make goes into a query and comes out of a result as any other.

public import Foundation

// MARK: CFBase.h: allocators and ranges

/// `kCFAllocatorNull`: as the deallocator of ``CFDataCreateWithBytesNoCopy(_:_:_:_:)``, the bytes are never freed.
public let kCFAllocatorNull: CFAllocator! = CFAllocator()
/// `kCFAllocatorMalloc`: as a deallocator, the bytes are freed with `free`.
public let kCFAllocatorMalloc: CFAllocator! = CFAllocator()

/// `CFRange`.
public struct CFRange: Sendable, Hashable {
    public var location: CFIndex
    public var length: CFIndex
    public init() { location = 0; length = 0 }
    public init(location: CFIndex, length: CFIndex) {
        self.location = location
        self.length = length
    }
}

/// `CFRangeMake`.
public func CFRangeMake(_ loc: CFIndex, _ len: CFIndex) -> CFRange { CFRange(location: loc, length: len) }

// MARK: CFData.h

/// `CFDataCreateWithBytesNoCopy`: data over `bytes` without a copy. With `kCFAllocatorNull` as
/// `bytesDeallocator` the bytes are never freed (the caller keeps them alive while the data lives); with any
/// other (`kCFAllocatorDefault`, `kCFAllocatorMalloc`) the data owns them and frees them with `free`, as Apple's
/// default and malloc allocators do.
public func CFDataCreateWithBytesNoCopy(_ allocator: CFAllocator!, _ bytes: UnsafePointer<UInt8>!, _ length: CFIndex,
                                        _ bytesDeallocator: CFAllocator!) -> CFData! {
    guard let bytes, length > 0 else { return NSData() }
    let owned = bytesDeallocator !== kCFAllocatorNull
    return NSData(bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes), length: length, freeWhenDone: owned)
}

/// `CFDataCreateCopy`.
public func CFDataCreateCopy(_ allocator: CFAllocator!, _ theData: CFData!) -> CFData! {
    theData.map { NSData(data: $0 as Data) }
}

/// `CFDataCreateMutable`: empty mutable data (`capacity` is a hint here, as 0 is on Apple platforms).
public func CFDataCreateMutable(_ allocator: CFAllocator!, _ capacity: CFIndex) -> CFMutableData! {
    NSMutableData(capacity: max(capacity, 0)) ?? NSMutableData()
}

/// `CFDataAppendBytes`.
public func CFDataAppendBytes(_ theData: CFMutableData!, _ bytes: UnsafePointer<UInt8>!, _ length: CFIndex) {
    guard let theData, let bytes, length > 0 else { return }
    theData.append(bytes, length: length)
}

/// `CFDataSetLength`: new bytes are zero.
public func CFDataSetLength(_ theData: CFMutableData!, _ length: CFIndex) {
    theData?.length = max(length, 0)
}

/// `CFDataGetMutableBytePtr`.
public func CFDataGetMutableBytePtr(_ theData: CFMutableData!) -> UnsafeMutablePointer<UInt8>! {
    guard let theData, theData.length > 0 else { return nil }
    return theData.mutableBytes.assumingMemoryBound(to: UInt8.self)
}

/// `CFDataGetBytes`: copies the bytes of `range` into `buffer`. A range outside the data is a programming error
/// on Apple platforms; here it copies nothing.
public func CFDataGetBytes(_ theData: CFData!, _ range: CFRange, _ buffer: UnsafeMutablePointer<UInt8>!) {
    guard let theData, let buffer, range.location >= 0, range.length >= 0,
          range.location + range.length <= theData.length else { return }
    theData.getBytes(buffer, range: NSRange(location: range.location, length: range.length))
}

// MARK: CFArray.h: callbacks

/// `CFArrayRetainCallBack` and the other array callbacks: the dictionary callbacks' types (the same shapes as
/// Apple's; Swift function types here, for the reason `CFDictionaryRetainCallBack` gives).
public typealias CFArrayRetainCallBack = CFDictionaryRetainCallBack
public typealias CFArrayReleaseCallBack = CFDictionaryReleaseCallBack
public typealias CFArrayCopyDescriptionCallBack = CFDictionaryCopyDescriptionCallBack
public typealias CFArrayEqualCallBack = CFDictionaryEqualCallBack

/// `CFArrayCallBacks`: the same fields as ``CFDictionaryValueCallBacks`` (version, retain, release,
/// copyDescription, equal), so the same type. Whatever the callbacks, an array made here holds its values (see
/// ``CFArrayCreate(_:_:_:_:)``).
public typealias CFArrayCallBacks = CFDictionaryValueCallBacks

/// `kCFTypeArrayCallBacks`: values retained and compared with `CFEqual`.
public let kCFTypeArrayCallBacks: CFArrayCallBacks = kCFTypeDictionaryValueCallBacks

// MARK: CFDictionary.h: copies

/// `CFDictionaryCreateCopy`.
public func CFDictionaryCreateCopy(_ allocator: CFAllocator!, _ theDict: CFDictionary!) -> CFDictionary! {
    theDict.flatMap { $0.copy() as? NSDictionary }
}

/// `CFDictionaryCreateMutableCopy`: a mutable copy (a base query extended for one call); `capacity` is a hint.
public func CFDictionaryCreateMutableCopy(_ allocator: CFAllocator!, _ capacity: CFIndex,
                                          _ theDict: CFDictionary!) -> CFMutableDictionary! {
    theDict.flatMap { $0.mutableCopy() as? NSMutableDictionary } ?? NSMutableDictionary()
}

// MARK: CFDate.h

/// `CFTimeInterval`.
public typealias CFTimeInterval = Double
/// `CFAbsoluteTime`: seconds since 1 January 2001, 00:00:00 UTC.
public typealias CFAbsoluteTime = CFTimeInterval
/// `kCFAbsoluteTimeIntervalSince1970`.
public let kCFAbsoluteTimeIntervalSince1970: CFTimeInterval = 978_307_200
/// `kCFAbsoluteTimeIntervalSince1904`.
public let kCFAbsoluteTimeIntervalSince1904: CFTimeInterval = 3_061_152_000

/// `CFAbsoluteTimeGetCurrent`.
public func CFAbsoluteTimeGetCurrent() -> CFAbsoluteTime { Date().timeIntervalSinceReferenceDate }

/// `CFDateCreate`.
public func CFDateCreate(_ allocator: CFAllocator!, _ at: CFAbsoluteTime) -> CFDate! {
    NSDate(timeIntervalSinceReferenceDate: at)
}

/// `CFDateGetAbsoluteTime`: for a date from an item's `kSecAttrCreationDate` or `kSecAttrModificationDate`.
public func CFDateGetAbsoluteTime(_ theDate: CFDate!) -> CFAbsoluteTime { theDate?.timeIntervalSinceReferenceDate ?? 0 }

// MARK: CFString.h

/// `CFStringEncoding`.
public typealias CFStringEncoding = UInt32

/// `CFStringBuiltInEncodings` (`CFStringBuiltInEncodings.UTF8.rawValue`).
public enum CFStringBuiltInEncodings: CFStringEncoding, Sendable {
    case macRoman = 0
    case windowsLatin1 = 0x0500
    case isoLatin1 = 0x0201
    case nextStepLatin = 0x0B01
    case ASCII = 0x0600
    case unicode = 0x0100
    case UTF8 = 0x0800_0100
    case nonLossyASCII = 0x0BFF
    case UTF16BE = 0x1000_0100
    case UTF16LE = 0x1400_0100
    case UTF32 = 0x0C00_0100
    case UTF32BE = 0x1800_0100
    case UTF32LE = 0x1C00_0100

    public static var UTF16: CFStringBuiltInEncodings { .unicode }
}

/// The byte encodings the C-string functions accept here: UTF-8, ASCII and ISO Latin 1 (what Keychain code
/// passes); another encoding makes them fail as Apple's do for a string they cannot convert.
private func stringEncoding(_ encoding: CFStringEncoding) -> String.Encoding? {
    switch CFStringBuiltInEncodings(rawValue: encoding) {
    case .UTF8?: .utf8
    case .ASCII?: .ascii
    case .isoLatin1?: .isoLatin1
    default: nil
    }
}

/// `CFStringCreateWithCString`: nil when the bytes are not valid in `encoding` (UTF-8, ASCII or ISO Latin 1).
public func CFStringCreateWithCString(_ alloc: CFAllocator!, _ cStr: UnsafePointer<CChar>!,
                                      _ encoding: CFStringEncoding) -> CFString! {
    guard let cStr, let encoding = stringEncoding(encoding) else { return nil }
    return String(cString: cStr, encoding: encoding).map { NSString(string: $0) }
}

/// `CFStringCreateWithBytes`: nil when the bytes are not valid in `encoding` (UTF-8, ASCII or ISO Latin 1).
/// `isExternalRepresentation` (a byte-order mark) is ignored: these encodings have none.
public func CFStringCreateWithBytes(_ alloc: CFAllocator!, _ bytes: UnsafePointer<UInt8>!, _ numBytes: CFIndex,
                                    _ encoding: CFStringEncoding, _ isExternalRepresentation: Bool) -> CFString! {
    guard let encoding = stringEncoding(encoding), numBytes >= 0 else { return nil }
    guard let bytes, numBytes > 0 else { return NSString() }
    return String(bytes: UnsafeBufferPointer(start: bytes, count: numBytes), encoding: encoding).map { NSString(string: $0) }
}

/// `CFStringGetCString`: the string and a NUL in `buffer`; false (and nothing written) when it does not fit
/// in `bufferSize` bytes or cannot be written in `encoding`.
public func CFStringGetCString(_ theString: CFString!, _ buffer: UnsafeMutablePointer<CChar>!, _ bufferSize: CFIndex,
                               _ encoding: CFStringEncoding) -> Bool {
    guard let theString, let buffer, let encoding = stringEncoding(encoding),
          let bytes = (theString as String).data(using: encoding, allowLossyConversion: false),
          !bytes.contains(0), bytes.count < bufferSize else { return false }
    bytes.withUnsafeBytes { raw in
        UnsafeMutableRawPointer(buffer).copyMemory(from: raw.baseAddress ?? UnsafeRawPointer(buffer), byteCount: raw.count)
    }
    buffer[bytes.count] = 0
    return true
}

/// `CFStringCreateCopy`.
public func CFStringCreateCopy(_ alloc: CFAllocator!, _ theString: CFString!) -> CFString! {
    theString.map { NSString(string: $0 as String) }
}

/// `CFStringGetLength`: the length in UTF-16 code units, as Apple's.
public func CFStringGetLength(_ theString: CFString!) -> CFIndex { theString?.length ?? 0 }

// MARK: CFNumber.h

/// `CFNumberType`.
public enum CFNumberType: CFIndex, Sendable {
    case sInt8Type = 1, sInt16Type, sInt32Type, sInt64Type, float32Type, float64Type, charType, shortType, intType,
         longType, longLongType, floatType, doubleType, cfIndexType, nsIntegerType, cgFloatType

    public static var maxType: CFNumberType { .cgFloatType }
}

/// `CFNumberCreate`: a number holding the value `valuePtr` points to, read as `theType`.
public func CFNumberCreate(_ allocator: CFAllocator!, _ theType: CFNumberType, _ valuePtr: UnsafeRawPointer!) -> CFNumber! {
    guard let p = valuePtr else { return nil }
    switch theType {
    case .sInt8Type, .charType: return NSNumber(value: p.loadUnaligned(as: Int8.self))
    case .sInt16Type, .shortType: return NSNumber(value: p.loadUnaligned(as: Int16.self))
    case .sInt32Type, .intType: return NSNumber(value: p.loadUnaligned(as: Int32.self))
    case .sInt64Type, .longLongType: return NSNumber(value: p.loadUnaligned(as: Int64.self))
    case .longType, .cfIndexType, .nsIntegerType: return NSNumber(value: p.loadUnaligned(as: Int.self))
    case .float32Type, .floatType: return NSNumber(value: p.loadUnaligned(as: Float.self))
    case .float64Type, .doubleType, .cgFloatType: return NSNumber(value: p.loadUnaligned(as: Double.self))
    }
}

/// `CFNumberGetValue`: writes the number as `theType` to `valuePtr`; false when it is not exactly representable
/// there (the value written is then the closest one, as Apple's is).
public func CFNumberGetValue(_ number: CFNumber!, _ theType: CFNumberType, _ valuePtr: UnsafeMutableRawPointer!) -> Bool {
    guard let number, let p = valuePtr else { return false }
    let kind = NumberKind(number)
    func store<T: FixedWidthInteger>(_: T.Type) -> Bool {
        switch kind {
        case .bool(let b): p.storeBytes(of: b ? 1 : 0, as: T.self); return true
        case .integer(let i):
            p.storeBytes(of: T(clamping: i), as: T.self)
            return T(exactly: i) != nil
        case .fraction(let d):
            p.storeBytes(of: d.isNaN ? 0 : (d >= Double(T.max) ? T.max : d <= Double(T.min) ? T.min : T(d)), as: T.self)
            return false
        case .outOfRange:
            p.storeBytes(of: T(clamping: number.uint64Value), as: T.self)
            return T(exactly: number.uint64Value) != nil
        }
    }
    switch theType {
    case .sInt8Type, .charType: return store(Int8.self)
    case .sInt16Type, .shortType: return store(Int16.self)
    case .sInt32Type, .intType: return store(Int32.self)
    case .sInt64Type, .longLongType: return store(Int64.self)
    case .longType, .cfIndexType, .nsIntegerType: return store(Int.self)
    case .float32Type, .floatType:
        let d = number.doubleValue
        p.storeBytes(of: Float(d), as: Float.self)
        return Double(Float(d)) == d || d.isNaN
    case .float64Type, .doubleType, .cgFloatType:
        p.storeBytes(of: number.doubleValue, as: Double.self)
        if case .outOfRange = kind { return Double(exactly: number.uint64Value) != nil }
        if case .integer(let i) = kind { return Double(exactly: i) != nil }
        return true
    }
}

/// `CFNumberGetType`: how the number holds its value (a boolean or an integer as `sInt64Type`, a fraction as
/// `float64Type`; Foundation on Linux keeps no narrower storage type that code could rely on).
public func CFNumberGetType(_ number: CFNumber!) -> CFNumberType {
    guard let number else { return .sInt64Type }
    if case .fraction = NumberKind(number) { return .float64Type }
    return .sInt64Type
}

/// `CFNumberIsFloatType`.
public func CFNumberIsFloatType(_ number: CFNumber!) -> Bool {
    guard let number else { return false }
    if case .fraction = NumberKind(number) { return true }
    return false
}

// MARK: CFSet.h

/// `CFSet` is `NSSet` (toll-free bridged on Apple platforms).
public typealias CFSet = NSSet
/// `CFMutableSet` is `NSMutableSet`.
public typealias CFMutableSet = NSMutableSet

/// `CFSetGetTypeID`.
public func CFSetGetTypeID() -> CFTypeID { TypeIDs.set }

/// `CFSetGetCount`.
public func CFSetGetCount(_ theSet: CFSet!) -> CFIndex { theSet?.count ?? 0 }

/// `CFSetContainsValue`: `value` is an object pointer (`Unmanaged.passUnretained(x).toOpaque()`), compared
/// with `CFEqual`.
public func CFSetContainsValue(_ theSet: CFSet!, _ value: UnsafeRawPointer!) -> Bool {
    guard let theSet, let value else { return false }
    return theSet.contains(Unmanaged<AnyObject>.fromOpaque(value).takeUnretainedValue())
}

// MARK: CFDictionary.h: made in one call, and changed the C way

/// `CFDictionaryCreate`: a dictionary of `numValues` keys and values given as object pointers (the C way:
/// arrays of `Unmanaged.passUnretained(x).toOpaque()`). As ``CFDictionaryCreateMutable(_:_:_:_:)``, whatever the
/// callbacks, it holds its keys and values and compares keys with `CFEqual`; a NULL key or value is left out.
public func CFDictionaryCreate(_ allocator: CFAllocator!, _ keys: UnsafeMutablePointer<UnsafeRawPointer?>!,
                               _ values: UnsafeMutablePointer<UnsafeRawPointer?>!, _ numValues: CFIndex,
                               _ keyCallBacks: UnsafePointer<CFDictionaryKeyCallBacks>!,
                               _ valueCallBacks: UnsafePointer<CFDictionaryValueCallBacks>!) -> CFDictionary! {
    let dictionary = NSMutableDictionary()
    if let keys, let values, numValues > 0 {
        for i in 0..<numValues { CFDictionarySetValue(dictionary, keys[i], values[i]) }
    }
    return (dictionary.copy() as? NSDictionary) ?? dictionary
}

/// `CFDictionaryAddValue`: sets the value only when the key is absent.
public func CFDictionaryAddValue(_ theDict: CFMutableDictionary!, _ key: UnsafeRawPointer!, _ value: UnsafeRawPointer!) {
    guard let theDict, let key, !CFDictionaryContainsKey(theDict, key) else { return }
    CFDictionarySetValue(theDict, key, value)
}

/// `CFDictionaryReplaceValue`: sets the value only when the key is present.
public func CFDictionaryReplaceValue(_ theDict: CFMutableDictionary!, _ key: UnsafeRawPointer!, _ value: UnsafeRawPointer!) {
    guard let theDict, let key, CFDictionaryContainsKey(theDict, key) else { return }
    CFDictionarySetValue(theDict, key, value)
}

/// `CFDictionaryRemoveValue`.
public func CFDictionaryRemoveValue(_ theDict: CFMutableDictionary!, _ key: UnsafeRawPointer!) {
    guard let theDict, let key else { return }
    theDict.removeObject(forKey: Unmanaged<AnyObject>.fromOpaque(key).takeUnretainedValue())
}
