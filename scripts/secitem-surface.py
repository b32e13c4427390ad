#!/usr/bin/env python3
"""Apple's Keychain surface, from Apple's headers: the table and the compile test.

Usage: scripts/secitem-surface.py HEADER_FOLDER [--check] | --pieces-only [--check]

HEADER_FOLDER holds Security framework headers (SecItem.h, SecBase.h, SecAccessControl.h, SecRandom.h,
SecKey.h, SecCertificate.h, SecIdentity.h), from an SDK or Apple's open-source Security: the script reads their
declarations (extern constants, functions, CF types, CF_ENUM / CF_OPTIONS members, with their availability),
maps each to the Swift declaration Apple's importer makes of it, and looks for that declaration in
Sources/SecItem:

- provided:    declared with Apple's name (and, for functions, Apple's imported Swift type: the compile test
               assigns each function to a variable of that type);
- unavailable: declared `@available(*, unavailable, message: ...)`, the message being the reason;
- missing:     not declared.

A declaration is noted "Linux meaning" when LINUX_MEANINGS below says what it does here. It writes:

- Sources/SecItem/SecItem.docc/AppleSurface.md: the table, the counts, and each header read (its first line and
  SHA-256, no local path);
- Tests/SecItemPortingTests/AppleSurfaceUsage.swift: every provided declaration used the way Apple code uses it,
  compiled in the Swift 6 and Swift 5 language modes (Tests/SecItemPortingSwift5Tests is a link to that folder).

The Core Foundation and Foundation pieces Keychain code uses around the Security headers (CF type identity,
CFBundle keys, CFDictionary/CFArray/CFData accessors, Unmanaged round trips, NSCopying keys) are listed in
FOUNDATION_PIECES below, each with the usage the compile test writes.

On a Mac, HEADER_FOLDER is "$(xcrun --show-sdk-path)/System/Library/Frameworks/Security.framework/Headers"; the
script reads full headers (comments, C++ guards, #if TARGET_OS_OSX blocks) as well as declaration-only extracts.
The headers are not kept in this repository (Apple's text); the generated files are, so CI needs neither the
headers nor the network. After a header or source change: run the script, review the table's diff, commit both.

--check: exit 1 if a written file would change or a declaration is missing (after a header update).
--pieces-only (no HEADER_FOLDER): rewrite only the Core Foundation and Foundation parts of both files from
FOUNDATION_PIECES, keeping the Security headers' part as committed: for a piece added on a machine without the
headers.
Deterministic: the same headers and sources give the same bytes.
"""
import hashlib
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADERS = ["SecItem.h", "SecBase.h", "SecAccessControl.h", "SecRandom.h", "SecKey.h", "SecCertificate.h",
           "SecIdentity.h"]
TABLE = os.path.join(ROOT, "Sources/SecItem/SecItem.docc/AppleSurface.md")
USAGE = os.path.join(ROOT, "Tests/SecItemPortingTests/AppleSurfaceUsage.swift")

# What a provided declaration does on Linux when that is not what it does on Apple platforms.
LINUX_MEANINGS = {
    "SecKeyCreateRandomKey": "nil and a CFError errSecUnimplemented: no key generation on Linux here",
    "SecKeyGeneratePair": "errSecUnimplemented: no key generation on Linux here",
    "SecKeyCreateWithData": "a key holding the bytes and attributes (kSecAttrKeyType and kSecAttrKeyClass required); the bytes are not checked",
    "SecKeyGetBlockSize": "kSecAttrKeySizeInBits / 8 from the key's attributes, else 0",
    "SecKeyCopyPublicKey": "the key itself when it is a public key, else nil (no derivation)",
    "SecCertificateCreateWithData": "a certificate for DER framed as X.509 (SEQUENCE of tbsCertificate, algorithm, signature); nil otherwise",
    "SecCertificateCopySubjectSummary": "nil: names are not parsed here",
    "SecCertificateCopyCommonName": "errSecUnimplemented: names are not parsed here",
    "SecCertificateCopyEmailAddresses": "errSecUnimplemented: names are not parsed here",
    "SecCertificateCopyNormalizedIssuerSequence": "nil: names are not normalized here",
    "SecCertificateCopyNormalizedSubjectSequence": "nil: names are not normalized here",
    "SecCertificateCopyKey": "nil: public keys are not extracted here",
    "SecCertificateCopyPublicKey": "nil: public keys are not extracted here (iOS form, deprecated)",
    "SecIdentityCopyCertificate": "as Apple's; nothing on Linux makes a SecIdentity",
    "SecIdentityCopyPrivateKey": "as Apple's; nothing on Linux makes a SecIdentity",
    "SecPolicy": "the type only: no trust evaluation, no function makes one",
    "SecAccessControlCreateWithFlags": "as Apple's; SecItemAdd/SecItemUpdate refuse constraints Linux cannot verify (errSecUnimplemented)",
    "SecRandomCopyBytes": "the kernel's generator (getrandom)",
    "SecCopyErrorMessageString": "Apple's text, followed by the reason the last call that returned the status gave",
}
# SecItem.h constants that macOS defines and iOS does not (ios(NA)): what the SecItem functions do with each
# is in MacOSDialect.md.
MACOS_DIALECT_NOTE = "macOS-only key: SecItem treats it as MacOSDialect.md lists"
SSL_NOTE = "status number only (no TLS here)"

# The keychain part of SecKey.h; its other declarations (signing, encryption, key exchange, SecKeyAlgorithm,
# SecPadding, the OS X-only CSSM functions) are cryptography, counted as out of scope.
SECKEY_KEYCHAIN_PART = {"kSecPrivateKeyAttrs", "kSecPublicKeyAttrs", "SecKeyGetTypeID", "SecKeyGeneratePair",
                        "SecKeyCreateRandomKey", "SecKeyCreateWithData", "SecKeyGetBlockSize",
                        "SecKeyCopyExternalRepresentation", "SecKeyCopyAttributes", "SecKeyCopyPublicKey"}


def in_scope(header, decl):
    """Whether a declaration is part of the surface: SecKey.h's keychain part only; SecCertificate.h without its
    OS X-only legacy (CSSM) section; SecBase.h without the OS X-only Opaque…Ref struct names; all of the rest."""
    if header == "SecKey.h":
        return decl["name"] in SECKEY_KEYCHAIN_PART
    if header == "SecCertificate.h":
        return decl["block"] != "osx"
    if header == "SecBase.h":
        return not decl["name"].startswith("Opaque")
    return True


# The Core Foundation and Foundation pieces (name, kind, Swift type, usage in the compile test, note, source).
# `usage` is Swift code in a function body; it must compile in both language modes.
# The note of every CF callback type (CFDictionary's and CFArray's): one decision, one text.
SWIFT_CALLBACK_NOTE = "Linux: a Swift function type, not @convention(c): a C function type cannot name CFAllocator (a Swift class here) or Unmanaged; closures written for Apple's type convert"

FOUNDATION_PIECES = [
    ("CFTypeRef", "type", "AnyObject", "let object: CFTypeRef = kSecClass; _ = object", "", "CFBase.h"),
    ("CF types Hashable", "idiom", "Hashable & CustomStringConvertible",
     "requireCFType(CFString.self); requireCFType(CFMutableString.self); requireCFType(CFDictionary.self)\n"
     "        requireCFType(CFMutableDictionary.self); requireCFType(CFArray.self); requireCFType(CFMutableArray.self)\n"
     "        requireCFType(CFData.self); requireCFType(CFMutableData.self); requireCFType(CFNumber.self)\n"
     "        requireCFType(CFBoolean.self); requireCFType(CFDate.self); requireCFType(CFError.self)\n"
     "        requireCFType(CFNull.self); requireCFType(CFAllocator.self)",
     "every CF type is Hashable, Equatable and CustomStringConvertible, as on Apple platforms", "CFBase.h"),
    ("CFEqual", "function", "(CFTypeRef?, CFTypeRef?) -> Bool", "_ = CFEqual(kSecClass, kSecClass as String as NSString)", "isEqual(_:)", "CFBase.h"),
    ("CFHash", "function", "(CFTypeRef?) -> CFHashCode", "_ = CFHash(kSecClass)", "hash", "CFBase.h"),
    ("CFCopyDescription", "function", "(CFTypeRef?) -> CFString?", "_ = CFCopyDescription(kSecClass) as String", "description", "CFBase.h"),
    ("CFGetTypeID", "function", "(CFTypeRef?) -> CFTypeID", "_ = CFGetTypeID(kSecClass) == CFStringGetTypeID()", "", "CFBase.h"),
    ("CFRetain", "function", "(CFTypeRef?) -> CFTypeRef?", None, "unavailable in Swift on Apple platforms too", "CFBase.h"),
    ("CFRelease", "function", "(CFTypeRef?) -> Void", None, "unavailable in Swift on Apple platforms too", "CFBase.h"),
    ("kCFAllocatorDefault", "constant", "CFAllocator?", "_ = SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenUnlocked, [], nil)", "", "CFBase.h"),
    ("kCFNull", "constant", "CFNull?", "let null: CFNull = kCFNull; _ = null", "", "CFBase.h"),
    ("kCFBooleanTrue", "constant", "CFBoolean?", "let yes: [String: Any] = [kSecReturnData as String: kCFBooleanTrue!]; _ = yes", "", "CFNumber.h"),
    ("kCFBooleanFalse", "constant", "CFBoolean?", "_ = CFBooleanGetValue(kCFBooleanFalse)", "", "CFNumber.h"),
    ("kCFBundleIdentifierKey", "constant", "CFString?", "_ = Bundle.main.infoDictionary?[String(kCFBundleIdentifierKey)] as? String", "nil for a bare Linux executable without an Info.plist", "CFBundle.h"),
    ("kCFBundleInfoDictionaryVersionKey", "constant", "CFString?", "_ = kCFBundleInfoDictionaryVersionKey as String", "", "CFBundle.h"),
    ("kCFBundleExecutableKey", "constant", "CFString?", "_ = kCFBundleExecutableKey as String", "", "CFBundle.h"),
    ("kCFBundleVersionKey", "constant", "CFString?", "_ = kCFBundleVersionKey as String", "", "CFBundle.h"),
    ("kCFBundleDevelopmentRegionKey", "constant", "CFString?", "_ = kCFBundleDevelopmentRegionKey as String", "", "CFBundle.h"),
    ("kCFBundleNameKey", "constant", "CFString?", "_ = kCFBundleNameKey as String", "", "CFBundle.h"),
    ("kCFBundleLocalizationsKey", "constant", "CFString?", "_ = kCFBundleLocalizationsKey as String", "", "CFBundle.h"),
    ("CFDictionaryGetCount", "function", "(CFDictionary?) -> CFIndex", "_ = CFDictionaryGetCount([kSecClass: kSecClassGenericPassword] as CFDictionary)", "", "CFDictionary.h"),
    ("CFDictionaryContainsKey", "function", "(CFDictionary?, UnsafeRawPointer?) -> Bool", "_ = CFDictionaryContainsKey([kSecClass: kSecClassGenericPassword] as CFDictionary, Unmanaged.passUnretained(kSecClass).toOpaque())", "", "CFDictionary.h"),
    ("CFDictionaryGetValue", "function", "(CFDictionary?, UnsafeRawPointer?) -> UnsafeRawPointer?",
     "let dict = [kSecValueData as String: Data([1])] as CFDictionary\n"
     "        if let p = CFDictionaryGetValue(dict, Unmanaged.passUnretained(kSecValueData).toOpaque()) {\n"
     "            _ = Unmanaged<CFData>.fromOpaque(p).takeUnretainedValue() as Data\n        }",
     "Linux: the value stays valid while the dictionary lives, not only while it holds the value (Foundation on Linux bridges stored Swift values anew at each access)", "CFDictionary.h"),
    ("CFDictionaryCreateMutable", "function",
     "(CFAllocator?, CFIndex, UnsafePointer<CFDictionaryKeyCallBacks>?, UnsafePointer<CFDictionaryValueCallBacks>?) -> CFMutableDictionary?",
     "var keys = kCFTypeDictionaryKeyCallBacks, values = kCFTypeDictionaryValueCallBacks\n"
     "        let q: CFMutableDictionary = CFDictionaryCreateMutable(kCFAllocatorDefault, 0, &keys, &values)\n        _ = SecItemCopyMatching(q, nil)",
     "Linux: whatever the callbacks (NULL ones included), the dictionary holds its keys (copied) and values and compares keys with CFEqual", "CFDictionary.h"),
    ("CFDictionarySetValue", "function", "(CFMutableDictionary?, UnsafeRawPointer?, UnsafeRawPointer?) -> Void",
     "let q: CFMutableDictionary = CFDictionaryCreateMutable(nil, 0, nil, nil)\n"
     "        CFDictionarySetValue(q, Unmanaged.passUnretained(kSecClass).toOpaque(), Unmanaged.passUnretained(kSecClassGenericPassword).toOpaque())\n"
     "        _ = SecItemCopyMatching(q, nil)",
     "a NULL key or value changes nothing", "CFDictionary.h"),
    ("CFDictionaryKeyCallBacks", "type", "CFDictionaryKeyCallBacks",
     "var callbacks = CFDictionaryKeyCallBacks(); callbacks.version = 0; _ = callbacks.equal", "", "CFDictionary.h"),
    ("CFDictionaryValueCallBacks", "type", "CFDictionaryValueCallBacks",
     "var callbacks = CFDictionaryValueCallBacks(); callbacks.version = 0; _ = callbacks.retain", "", "CFDictionary.h"),
    ("CFDictionaryRetainCallBack", "type", "@convention(c) (CFAllocator?, UnsafeRawPointer?) -> UnsafeRawPointer?",
     "let retain: CFDictionaryRetainCallBack = { _, value in value }; _ = retain", SWIFT_CALLBACK_NOTE, "CFDictionary.h"),
    ("CFDictionaryReleaseCallBack", "type", "@convention(c) (CFAllocator?, UnsafeRawPointer?) -> Void",
     "let release: CFDictionaryReleaseCallBack = { _, _ in }; _ = release", SWIFT_CALLBACK_NOTE, "CFDictionary.h"),
    ("CFDictionaryCopyDescriptionCallBack", "type", "@convention(c) (UnsafeRawPointer?) -> Unmanaged<CFString>?",
     "let describe: CFDictionaryCopyDescriptionCallBack = { _ in nil }; _ = describe", SWIFT_CALLBACK_NOTE, "CFDictionary.h"),
    ("CFDictionaryEqualCallBack", "type", "@convention(c) (UnsafeRawPointer?, UnsafeRawPointer?) -> DarwinBoolean",
     "let equal: CFDictionaryEqualCallBack = { _, _ in true }; _ = equal",
     "Linux: returns Bool, not DarwinBoolean (the Darwin overlay's type for C's Boolean, which Linux lacks); `true` and `false` literals work in both", "CFDictionary.h"),
    ("CFDictionaryHashCallBack", "type", "@convention(c) (UnsafeRawPointer?) -> CFHashCode",
     "let hash: CFDictionaryHashCallBack = { _ in 0 }; _ = hash", "", "CFDictionary.h"),
    ("kCFTypeDictionaryKeyCallBacks", "constant", "CFDictionaryKeyCallBacks",
     "var keys = kCFTypeDictionaryKeyCallBacks\n        _ = CFDictionaryCreateMutable(nil, 0, &keys, nil)", "", "CFDictionary.h"),
    ("kCFCopyStringDictionaryKeyCallBacks", "constant", "CFDictionaryKeyCallBacks",
     "var keys = kCFCopyStringDictionaryKeyCallBacks\n        _ = CFDictionaryCreateMutable(nil, 0, &keys, nil)", "", "CFDictionary.h"),
    ("kCFTypeDictionaryValueCallBacks", "constant", "CFDictionaryValueCallBacks",
     "var values = kCFTypeDictionaryValueCallBacks\n        _ = CFDictionaryCreateMutable(nil, 0, nil, &values)", "", "CFDictionary.h"),
    ("CFArrayGetCount", "function", "(CFArray?) -> CFIndex", "_ = CFArrayGetCount([kSecClassKey] as CFArray)", "", "CFArray.h"),
    ("CFArrayGetValueAtIndex", "function", "(CFArray?, CFIndex) -> UnsafeRawPointer?",
     "if let p = CFArrayGetValueAtIndex([kSecClassKey] as CFArray, 0) { _ = Unmanaged<CFString>.fromOpaque(p).takeUnretainedValue() }",
     "Linux: the element stays valid while the array lives; an index out of range gives nil", "CFArray.h"),
    ("CFDataGetLength", "function", "(CFData?) -> CFIndex", "_ = CFDataGetLength(Data([1]) as NSData)", "", "CFData.h"),
    ("CFDataGetBytePtr", "function", "(CFData?) -> UnsafePointer<UInt8>?", "_ = CFDataGetBytePtr(Data([1]) as NSData)", "", "CFData.h"),
    ("CFDataCreate", "function", "(CFAllocator?, UnsafePointer<UInt8>?, CFIndex) -> CFData?", "_ = [UInt8](repeating: 7, count: 2).withUnsafeBufferPointer { CFDataCreate(nil, $0.baseAddress, 2) }", "", "CFData.h"),
    ("kCFAllocatorNull", "constant", "CFAllocator?", "_ = CFDataCreateWithBytesNoCopy(nil, nil, 0, kCFAllocatorNull)", "", "CFBase.h"),
    ("kCFAllocatorMalloc", "constant", "CFAllocator?", "let allocator: CFAllocator? = kCFAllocatorMalloc; _ = allocator", "", "CFBase.h"),
    ("CFRange", "type", "CFRange", "var range = CFRange(); range = CFRange(location: 0, length: 1); _ = range.location + range.length", "", "CFBase.h"),
    ("CFRangeMake", "function", "(CFIndex, CFIndex) -> CFRange", "_ = CFRangeMake(0, 1)", "", "CFBase.h"),
    ("CFDataCreateWithBytesNoCopy", "function", "(CFAllocator?, UnsafePointer<UInt8>?, CFIndex, CFAllocator?) -> CFData?",
     "let bytes: [UInt8] = [1, 2]\n        bytes.withUnsafeBufferPointer { buffer in _ = CFDataCreateWithBytesNoCopy(kCFAllocatorDefault, buffer.baseAddress, 2, kCFAllocatorNull) }",
     "", "CFData.h"),
    ("CFDataCreateCopy", "function", "(CFAllocator?, CFData?) -> CFData?", "_ = CFDataCreateCopy(nil, Data([1]) as CFData)", "", "CFData.h"),
    ("CFDataCreateMutable", "function", "(CFAllocator?, CFIndex) -> CFMutableData?", "let data: CFMutableData = CFDataCreateMutable(nil, 0); _ = data", "", "CFData.h"),
    ("CFDataAppendBytes", "function", "(CFMutableData?, UnsafePointer<UInt8>?, CFIndex) -> Void",
     "let data = CFDataCreateMutable(nil, 0)\n        CFDataAppendBytes(data, [UInt8](repeating: 1, count: 2), 2)", "", "CFData.h"),
    ("CFDataSetLength", "function", "(CFMutableData?, CFIndex) -> Void", "CFDataSetLength(CFDataCreateMutable(nil, 0), 4)", "", "CFData.h"),
    ("CFDataGetMutableBytePtr", "function", "(CFMutableData?) -> UnsafeMutablePointer<UInt8>?",
     "let data = CFDataCreateMutable(nil, 0)\n        CFDataSetLength(data, 1)\n        CFDataGetMutableBytePtr(data)?.pointee = 1", "", "CFData.h"),
    ("CFDataGetBytes", "function", "(CFData?, CFRange, UnsafeMutablePointer<UInt8>?) -> Void",
     "var out = [UInt8](repeating: 0, count: 1)\n        CFDataGetBytes(Data([9]) as CFData, CFRangeMake(0, 1), &out)", "", "CFData.h"),
    ("CFStringEncoding", "type", "UInt32", "let encoding: CFStringEncoding = CFStringBuiltInEncodings.UTF8.rawValue; _ = encoding", "", "CFString.h"),
    ("CFStringBuiltInEncodings", "type", "enum CFStringBuiltInEncodings: CFStringEncoding",
     "_ = [CFStringBuiltInEncodings.UTF8, .ASCII, .isoLatin1, .macRoman, .windowsLatin1, .UTF16, .UTF16LE, .UTF32].map(\\.rawValue)",
     "the C-string functions here convert UTF-8, ASCII and ISO Latin 1 (and fail for the others)", "CFString.h"),
    ("CFStringCreateWithCString", "function", "(CFAllocator?, UnsafePointer<CChar>?, CFStringEncoding) -> CFString?",
     "_ = CFStringCreateWithCString(kCFAllocatorDefault, \"svc\", CFStringBuiltInEncodings.UTF8.rawValue) as String", "", "CFString.h"),
    ("CFStringCreateWithBytes", "function", "(CFAllocator?, UnsafePointer<UInt8>?, CFIndex, CFStringEncoding, Bool) -> CFString?",
     "_ = CFStringCreateWithBytes(nil, [UInt8](\"svc\".utf8), 3, CFStringBuiltInEncodings.UTF8.rawValue, false)",
     "", "CFString.h"),
    ("CFStringGetCString", "function", "(CFString?, UnsafeMutablePointer<CChar>?, CFIndex, CFStringEncoding) -> Bool",
     "var buffer = [CChar](repeating: 0, count: 16)\n        _ = CFStringGetCString(kSecAttrAccount, &buffer, 16, CFStringBuiltInEncodings.UTF8.rawValue)", "", "CFString.h"),
    ("CFStringGetLength", "function", "(CFString?) -> CFIndex", "_ = CFStringGetLength(kSecAttrAccount)", "", "CFString.h"),
    ("CFNumberType", "type", "enum CFNumberType: CFIndex",
     "_ = [CFNumberType.sInt32Type, .sInt64Type, .intType, .longType, .cfIndexType, .doubleType, .maxType].map(\\.rawValue)", "", "CFNumber.h"),
    ("CFNumberCreate", "function", "(CFAllocator?, CFNumberType, UnsafeRawPointer?) -> CFNumber?",
     "var port: Int32 = 443\n        _ = CFNumberCreate(kCFAllocatorDefault, .sInt32Type, &port)", "", "CFNumber.h"),
    ("CFNumberGetValue", "function", "(CFNumber?, CFNumberType, UnsafeMutableRawPointer?) -> Bool",
     "var value: Int32 = 0\n        _ = CFNumberGetValue(443 as NSNumber, .sInt32Type, &value)", "", "CFNumber.h"),
    ("CFSet", "type", "CFSet", "let set: CFSet = NSSet(array: [kSecClassKey]); _ = CFSetGetCount(set)", "NSSet, as CFArray is NSArray", "CFSet.h"),
    ("CFMutableSet", "type", "CFMutableSet", "let set: CFMutableSet = NSMutableSet(); _ = set", "", "CFSet.h"),
    ("CFSetGetTypeID", "function", "() -> CFTypeID", "_ = CFGetTypeID(NSSet()) == CFSetGetTypeID()", "", "CFSet.h"),
    ("CFSetGetCount", "function", "(CFSet?) -> CFIndex", "_ = CFSetGetCount(NSSet())", "", "CFSet.h"),
    ("CFSetContainsValue", "function", "(CFSet?, UnsafeRawPointer?) -> Bool",
     "_ = CFSetContainsValue(NSSet(array: [kSecClassKey]), Unmanaged.passUnretained(kSecClassKey).toOpaque())", "", "CFSet.h"),
    ("CFDictionaryCreate", "function",
     "(CFAllocator?, UnsafeMutablePointer<UnsafeRawPointer?>?, UnsafeMutablePointer<UnsafeRawPointer?>?, CFIndex, UnsafePointer<CFDictionaryKeyCallBacks>?, UnsafePointer<CFDictionaryValueCallBacks>?) -> CFDictionary?",
     "var keys: [UnsafeRawPointer?] = [UnsafeRawPointer(Unmanaged.passUnretained(kSecClass).toOpaque())]\n"
     "        var values: [UnsafeRawPointer?] = [UnsafeRawPointer(Unmanaged.passUnretained(kSecClassGenericPassword).toOpaque())]\n"
     "        var keyCallBacks = kCFTypeDictionaryKeyCallBacks\n        var valueCallBacks = kCFTypeDictionaryValueCallBacks\n"
     "        _ = SecItemDelete(CFDictionaryCreate(kCFAllocatorDefault, &keys, &values, 1, &keyCallBacks, &valueCallBacks))",
     "Linux: whatever the callbacks, the dictionary holds its keys and values and compares keys with CFEqual", "CFDictionary.h"),
    ("CFDictionaryAddValue", "function", "(CFMutableDictionary?, UnsafeRawPointer?, UnsafeRawPointer?) -> Void",
     "CFDictionaryAddValue(NSMutableDictionary(), Unmanaged.passUnretained(kSecClass).toOpaque(), Unmanaged.passUnretained(kSecClassKey).toOpaque())", "", "CFDictionary.h"),
    ("CFDictionaryReplaceValue", "function", "(CFMutableDictionary?, UnsafeRawPointer?, UnsafeRawPointer?) -> Void",
     "CFDictionaryReplaceValue(NSMutableDictionary(), Unmanaged.passUnretained(kSecClass).toOpaque(), Unmanaged.passUnretained(kSecClassKey).toOpaque())", "", "CFDictionary.h"),
    ("CFDictionaryRemoveValue", "function", "(CFMutableDictionary?, UnsafeRawPointer?) -> Void",
     "CFDictionaryRemoveValue(NSMutableDictionary(), Unmanaged.passUnretained(kSecClass).toOpaque())", "", "CFDictionary.h"),
    ("CFDictionaryGetKeysAndValues", "function", "(CFDictionary?, UnsafeMutablePointer<UnsafeRawPointer?>?, UnsafeMutablePointer<UnsafeRawPointer?>?) -> Void",
     "let dict = [kSecClass: kSecClassKey] as CFDictionary\n        var keys = [UnsafeRawPointer?](repeating: nil, count: 1)\n"
     "        var values = [UnsafeRawPointer?](repeating: nil, count: 1)\n        CFDictionaryGetKeysAndValues(dict, &keys, &values)",
     "Linux: the keys and values stay valid while the dictionary lives", "CFDictionary.h"),
    ("CFDictionaryCreateCopy", "function", "(CFAllocator?, CFDictionary?) -> CFDictionary?",
     "_ = CFDictionaryCreateCopy(nil, [kSecClass: kSecClassKey] as CFDictionary)", "", "CFDictionary.h"),
    ("CFDictionaryCreateMutableCopy", "function", "(CFAllocator?, CFIndex, CFDictionary?) -> CFMutableDictionary?",
     "let base = [kSecClass: kSecClassGenericPassword] as CFDictionary\n        let query: CFMutableDictionary = CFDictionaryCreateMutableCopy(kCFAllocatorDefault, 0, base)\n        _ = SecItemDelete(query)",
     "", "CFDictionary.h"),
    ("CFArrayRetainCallBack", "type", "@convention(c) (CFAllocator?, UnsafeRawPointer?) -> UnsafeRawPointer?",
     "let retain: CFArrayRetainCallBack = { _, value in value }; _ = retain", SWIFT_CALLBACK_NOTE, "CFArray.h"),
    ("CFArrayReleaseCallBack", "type", "@convention(c) (CFAllocator?, UnsafeRawPointer?) -> Void",
     "let release: CFArrayReleaseCallBack = { _, _ in }; _ = release", SWIFT_CALLBACK_NOTE, "CFArray.h"),
    ("CFArrayCopyDescriptionCallBack", "type", "@convention(c) (UnsafeRawPointer?) -> Unmanaged<CFString>?",
     "let describe: CFArrayCopyDescriptionCallBack = { _ in nil }; _ = describe", SWIFT_CALLBACK_NOTE, "CFArray.h"),
    ("CFArrayEqualCallBack", "type", "@convention(c) (UnsafeRawPointer?, UnsafeRawPointer?) -> DarwinBoolean",
     "let equal: CFArrayEqualCallBack = { _, _ in true }; _ = equal",
     "Linux: returns Bool, not DarwinBoolean (the Darwin overlay's type for C's Boolean, which Linux lacks); `true` and `false` literals work in both", "CFArray.h"),
    ("CFArrayCallBacks", "type", "CFArrayCallBacks", "var callbacks = CFArrayCallBacks(); callbacks.version = 0; _ = callbacks.retain", "", "CFArray.h"),
    ("kCFTypeArrayCallBacks", "constant", "CFArrayCallBacks",
     "var callbacks = kCFTypeArrayCallBacks\n        _ = CFArrayCreateMutable(nil, 0, &callbacks)", "", "CFArray.h"),
    ("CFArrayCreate", "function", "(CFAllocator?, UnsafeMutablePointer<UnsafeRawPointer?>?, CFIndex, UnsafePointer<CFArrayCallBacks>?) -> CFArray?",
     "var values: [UnsafeRawPointer?] = [UnsafeRawPointer(Unmanaged.passUnretained(kSecClassKey).toOpaque())]\n"
     "        var callbacks = kCFTypeArrayCallBacks\n        _ = CFArrayGetCount(CFArrayCreate(kCFAllocatorDefault, &values, 1, &callbacks))",
     "Linux: whatever the callbacks, the array holds its values", "CFArray.h"),
    ("CFArrayCreateMutable", "function", "(CFAllocator?, CFIndex, UnsafePointer<CFArrayCallBacks>?) -> CFMutableArray?",
     "let array: CFMutableArray = CFArrayCreateMutable(nil, 0, nil); _ = array", "", "CFArray.h"),
    ("CFArrayAppendValue", "function", "(CFMutableArray?, UnsafeRawPointer?) -> Void",
     "CFArrayAppendValue(CFArrayCreateMutable(nil, 0, nil), Unmanaged.passUnretained(kSecClassKey).toOpaque())", "", "CFArray.h"),
    ("CFTimeInterval", "type", "Double", "let interval: CFTimeInterval = 1.5; _ = interval", "", "CFDate.h"),
    ("CFAbsoluteTime", "type", "Double", "let now: CFAbsoluteTime = CFAbsoluteTimeGetCurrent(); _ = now", "", "CFDate.h"),
    ("kCFAbsoluteTimeIntervalSince1970", "constant", "CFTimeInterval", "_ = CFAbsoluteTimeGetCurrent() + kCFAbsoluteTimeIntervalSince1970", "", "CFDate.h"),
    ("kCFAbsoluteTimeIntervalSince1904", "constant", "CFTimeInterval", "_ = kCFAbsoluteTimeIntervalSince1904", "", "CFDate.h"),
    ("CFAbsoluteTimeGetCurrent", "function", "() -> CFAbsoluteTime", "_ = CFAbsoluteTimeGetCurrent()", "", "CFDate.h"),
    ("CFDateCreate", "function", "(CFAllocator?, CFAbsoluteTime) -> CFDate?", "_ = CFDateCreate(kCFAllocatorDefault, CFAbsoluteTimeGetCurrent())", "", "CFDate.h"),
    ("CFDateGetAbsoluteTime", "function", "(CFDate?) -> CFAbsoluteTime", "_ = CFDateGetAbsoluteTime(Date() as NSDate)", "", "CFDate.h"),
    ("CFStringCreateCopy", "function", "(CFAllocator?, CFString?) -> CFString?", "_ = CFStringCreateCopy(nil, kSecAttrService)", "", "CFString.h"),
    ("CFNumberGetType", "function", "(CFNumber?) -> CFNumberType", "_ = CFNumberGetType(443 as NSNumber) == .sInt64Type",
     "sInt64Type for an integer or boolean, float64Type for a fraction (Foundation on Linux keeps no narrower storage type)", "CFNumber.h"),
    ("CFNumberIsFloatType", "function", "(CFNumber?) -> Bool", "_ = CFNumberIsFloatType(1.5 as NSNumber)", "", "CFNumber.h"),
    ("CFErrorGetCode", "function", "(CFError?) -> CFIndex",
     "var error: Unmanaged<CFError>?\n        if SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, SecAccessControlCreateFlags(rawValue: 1 << 20), &error) == nil,\n"
     "           let e = error?.takeRetainedValue() { _ = CFErrorGetCode(e); _ = e as any Error }", "", "CFError.h"),
    ("Unmanaged round trip", "idiom", "Unmanaged<CFString>",
     "let raw = Unmanaged.passUnretained(kSecAttrAccount).toOpaque()\n        _ = Unmanaged<CFString>.fromOpaque(raw).takeUnretainedValue() as String", "", "Swift"),
    ("SecAccessControl in [String: AnyHashable]", "idiom", "SecAccessControl: Hashable",
     "var q: [String: AnyHashable] = [kSecClass as String: kSecClassGenericPassword as String]\n"
     "        q[kSecAttrAccessControl as String] = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [], nil)\n        _ = q", "", "Swift"),
    ("NSMutableDictionary.setObject(_:forKey: NSCopying)", "method", "(Any, any NSCopying) -> Void",
     "let q = NSMutableDictionary()\n        q.setObject(kSecClassGenericPassword, forKey: kSecClass as! any NSCopying)\n        _ = SecItemCopyMatching(q, nil)",
     "Darwin's signature (Foundation on Linux takes AnyHashable); the key's copy is stored", "Foundation"),
    ("NSError()", "initializer", "() -> NSError", "let placeholder = NSError(); _ = placeholder.code",
     "Darwin's form (NSObject's init() there; Foundation on Linux has none for NSError): the empty domain, code 0", "Foundation"),
    ("NSDictionary.isEqual(to: [String: Any])", "method", "([String: Any]) -> Bool",
     "let base: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: \"svc\"]\n"
     "        _ = NSDictionary(dictionary: base).isEqual(to: base)",
     "Darwin's bridging equality (Foundation on Linux finds String and NSString values unequal)", "Foundation"),
]


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def header_info(path):
    raw = open(path, "rb").read()
    text = raw.decode("utf-8", "replace")
    first = ""
    for line in text.splitlines():
        line = line.strip().strip("/*").strip()
        if line:
            first = line
            break
    return first, hashlib.sha256(raw).hexdigest()


def split_top(body):
    """`body` split at the commas outside parentheses."""
    parts, depth, current = [], 0, ""
    for ch in body:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return parts


def platform_of(attrs, block):
    """'macOS' (iOS does not have it), 'iOS' (macOS does not), or '' (both)."""
    if block == "osx":
        return "macOS"
    if block == "iphone":
        return "iOS"
    if re.search(r"ios\(NA\)|__IPHONE_NA|API_UNAVAILABLE\([^)]*\bios\b", attrs):
        return "macOS"
    if re.search(r"API_UNAVAILABLE\([^)]*\bmacos\b", attrs):
        return "iOS"
    return ""


def deprecated(attrs):
    return bool(re.search(r"DEPRECATED|deprecated\(", attrs))


CF_TYPES = {"CFDictionaryRef": "CFDictionary", "CFDataRef": "CFData", "CFStringRef": "CFString",
            "CFArrayRef": "CFArray", "CFTypeRef": "CFTypeRef", "CFAllocatorRef": "CFAllocator",
            "CFErrorRef": "CFError", "CFDateRef": "CFDate", "CFNumberRef": "CFNumber", "CFBooleanRef": "CFBoolean"}
SCALARS = {"OSStatus": "OSStatus", "CFTypeID": "CFTypeID", "size_t": "Int", "int": "Int32", "CFIndex": "CFIndex",
           "SecAccessControlCreateFlags": "SecAccessControlCreateFlags", "CSSM_KEYUSE": "UInt32", "void": "Void",
           "SecRandomRef": "SecRandomRef"}


def swift_ref(c):
    if c in CF_TYPES:
        return CF_TYPES[c]
    if re.fullmatch(r"Sec\w+Ref", c):
        return c[:-3]
    return SCALARS.get(c, c)


def swift_param(p):
    p = re.sub(r"\bCF_RETURNS_RETAINED\b|\bconst\b", " ", p)
    nullable = bool(re.search(r"__nullable|_Nullable", p))
    nonnull = bool(re.search(r"__nonnull|_Nonnull", p))
    p = re.sub(r"__nullable|_Nullable|__nonnull|_Nonnull", " ", p)
    p = " ".join(p.split())
    m = re.match(r"(\w+)\s*(\*?)\s*(\w+)?$", p.replace(" *", "*").replace("*", " * ").strip().replace("  ", " "))
    tokens = p.replace("*", " * ").split()
    base = tokens[0]
    star = "*" in tokens
    if base == "void" and star:
        return "UnsafeMutableRawPointer" + ("?" if nullable else "")
    if star:
        inner = swift_ref(base)
        if base == "CFErrorRef" and not nullable and not nonnull:
            return "UnsafeMutablePointer<Unmanaged<CFError>?>?"
        return f"UnsafeMutablePointer<{inner}?>" + ("" if nonnull else "?")
    t = swift_ref(base)
    if base == "SecRandomRef":
        return "SecRandomRef?" if nullable else "SecRandomRef"
    return t + ("?" if nullable else "")


def swift_function_type(ret, params):
    nullable_ret = bool(re.search(r"__nullable|_Nullable", ret))
    ret = " ".join(re.sub(r"__nullable|_Nullable|CF_RETURNS_RETAINED", " ", ret).split())
    r = swift_ref(ret)
    if nullable_ret:
        r += "?"
    params = params.strip()
    if params in ("", "void"):
        args = []
    else:
        args = [swift_param(x) for x in params.split(",")]
    return "(" + ", ".join(args) + ") -> " + r


def parse(path):
    """Declarations of one header: dicts with name, kind, swift (Swift type), platform, deprecated."""
    text = strip_comments(open(path, encoding="utf-8", errors="replace").read())
    out = []
    # Conditional blocks: #if SEC_OS_OSX / TARGET_OS_OSX (macOS) and #if TARGET_OS_IPHONE (iOS), by line.
    lines, block_of_line, stack = text.split("\n"), [], []
    for line in lines:
        s = line.strip()
        if s.startswith("#if"):
            stack.append("cplusplus" if "__cplusplus" in s else
                         "osx" if re.search(r"SEC_OS_OSX|TARGET_OS_OSX", s) else
                         "iphone" if "TARGET_OS_IPHONE" in s else "")
        elif s.startswith("#else") and stack:
            stack[-1] = {"osx": "iphone", "iphone": "osx", "cplusplus": ""}.get(stack[-1], "")
        elif s.startswith("#endif") and stack:
            stack.pop()
        block_of_line.append("cplusplus" if "cplusplus" in stack else next((b for b in reversed(stack) if b), ""))
    # Blank preprocessor lines, keep line structure to map positions to blocks.
    text = "\n".join(" " * len(l) if l.strip().startswith("#") or block_of_line[i] == "cplusplus" else l
                     for i, l in enumerate(lines))
    # Declaration-free macros (same length, so positions stay).
    text = re.sub(r"\b(__BEGIN_DECLS|__END_DECLS|CF_ASSUME_NONNULL_BEGIN|CF_ASSUME_NONNULL_END|CF_IMPLICIT_BRIDGING_ENABLED|"
                  r"CF_IMPLICIT_BRIDGING_DISABLED|CF_EXTERN_C_BEGIN|CF_EXTERN_C_END)\b", lambda m: " " * len(m.group(0)), text)
    line_starts = [0]
    for l in lines:
        line_starts.append(line_starts[-1] + len(l) + 1)

    def block_at(pos):
        lo, hi = 0, len(line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if line_starts[mid] <= pos:
                lo = mid
            else:
                hi = mid - 1
        return block_of_line[min(lo, len(block_of_line) - 1)]

    # Enums and options: CF_ENUM(OSStatus) { ... } and typedef CF_OPTIONS(T, Name) { ... }.
    for m in re.finditer(r"(typedef\s+)?CF_(ENUM|OPTIONS)\(([^)]*)\)\s*\{(.*?)\}([^;]*);", text, re.S):
        spec = [x.strip() for x in m.group(3).split(",")]
        option_type = spec[1] if len(spec) > 1 else None
        block = block_at(m.start())
        if option_type:
            out.append(dict(block=block, name=option_type, kind="options", swift=option_type, platform=platform_of(m.group(5), block),
                            deprecated=False))
        for member in split_top(m.group(4)):
            member = member.strip()
            if not member:
                continue
            mm = re.match(r"(\w+)(.*?)=", member, re.S)
            if not mm:
                continue
            name, attrs = mm.group(1), mm.group(2)
            if option_type:
                prefix = "kSecAccessControl"
                short = name[len(prefix):] if name.startswith(prefix) else name
                short = short[0].lower() + short[1:]
                out.append(dict(block=block, name=name, kind="option", swift=f"{option_type}.{short}", member=short, owner=option_type,
                                platform=platform_of(attrs, block), deprecated=deprecated(attrs)))
            else:
                out.append(dict(block=block, name=name, kind="status", swift=SCALARS.get(spec[0], spec[0]), platform=platform_of(attrs, block),
                                deprecated=deprecated(attrs)))
    text = re.sub(r"(typedef\s+)?CF_(ENUM|OPTIONS)\([^)]*\)\s*\{.*?\}[^;]*;", lambda m: " " * len(m.group(0)), text, flags=re.S)
    # Structs with bodies: struct ATTRS Name { ... };
    for m in re.finditer(r"\bstruct\s+(API_UNAVAILABLE\([^)]*\)\s+)?(\w+)\s*\{[^}]*\}\s*;", text):
        out.append(dict(block=block_at(m.start()), name=m.group(2), kind="struct", swift=m.group(2), platform=platform_of(m.group(1) or "", block_at(m.start())),
                        deprecated=False))
    text = re.sub(r"\bstruct\s+(API_UNAVAILABLE\([^)]*\)\s+)?(\w+)\s*\{[^}]*\}\s*;", lambda m: " " * len(m.group(0)), text)
    pos = 0
    for stmt in text.split(";"):
        start = pos
        pos += len(stmt) + 1
        s = " ".join(stmt.split())
        if not s:
            continue
        block = block_at(start + len(stmt) - len(stmt.lstrip()))
        m = re.search(r"\bextern const (\w+) (\w+)(.*)$", s)
        if m:
            ctype, name, attrs = m.groups()
            swift = "CFString" if ctype == "CFStringRef" else (SCALARS.get(ctype) or swift_ref(ctype)) + "?"
            out.append(dict(block=block, name=name, kind="constant", swift=swift, platform=platform_of(attrs, block), deprecated=deprecated(attrs)))
            continue
        m = re.match(r"typedef struct (?:CF_BRIDGED_TYPE\(id\) )?\w+ \*\s*(\w+)(.*)$", s)
        if m:
            name, attrs = m.groups()
            out.append(dict(block=block, name=name, kind="type", swift=swift_ref(name), platform=platform_of(attrs, block), deprecated=False))
            continue
        m = re.match(r"typedef const struct \w+ \* ?(\w+)(.*)$", s)
        if m:
            out.append(dict(block=block, name=m.group(1), kind="typealias", swift=m.group(1), platform=platform_of(m.group(2), block), deprecated=False))
            continue
        m = re.match(r"typedef (?:struct )?(\w+) \*?\s*(\w+)(.*)$", s)
        if m:
            base, name, attrs = m.groups()
            if base == name:   # typedef struct X X: the struct above
                continue
            out.append(dict(block=block, name=name, kind="typealias", swift=name, platform=platform_of(attrs, block), deprecated=False))
            continue
        m = re.match(r"(.*?)\b(\w+)\((.*?)\)(.*)$", s)
        if m and not s.startswith("typedef"):
            ret, name, params, attrs = m.groups()
            if name in ("API_AVAILABLE", "CF_ENUM", "CF_OPTIONS"):
                continue
            out.append(dict(block=block, name=name, kind="function", swift=swift_function_type(ret, params),
                            platform=platform_of(attrs, block), deprecated=deprecated(attrs)))
    return out


def scan_sources():
    """Public declarations of Sources/SecItem: name -> (kind, unavailable message or None)."""
    found, members = {}, {}
    src_dir = os.path.join(ROOT, "Sources/SecItem")
    for file in sorted(os.listdir(src_dir)):
        if not file.endswith(".swift"):
            continue
        owner, pending = None, None
        for line in open(os.path.join(src_dir, file), encoding="utf-8"):
            s = line.strip()
            m = re.match(r'@available\(\*, unavailable, message: "(.*)"\)', s)
            if m:
                pending = m.group(1)
                continue
            m = re.match(r"(?:nonisolated\(unsafe\) )?public (?:final )?(let|var|func|class|struct|typealias|enum) (\w+)", s)
            if m:
                found[m.group(2)] = (m.group(1), pending)
                if m.group(1) in ("struct", "class", "enum"):
                    owner = m.group(2)
                pending = None
                continue
            m = re.match(r"public static let (\w+)", s)
            if m and owner:
                members[f"{owner}.{m.group(1)}"] = (None, None)
            if s and not s.startswith("@") and not s.startswith("///"):
                pending = None
    return found, members


def decide(decl, found, members):
    if decl["kind"] == "option":
        have = members.get(decl["swift"])
    else:
        have = found.get(decl["swift"] if decl["kind"] in ("type",) else decl["name"])
    if have is None:
        return "missing", ""
    if have[1]:
        return "unavailable", have[1]
    name = decl["name"]
    if name in LINUX_MEANINGS or decl["swift"] in LINUX_MEANINGS:
        return "linux", LINUX_MEANINGS.get(name) or LINUX_MEANINGS[decl["swift"]]
    if decl["kind"] == "constant" and decl["platform"] == "macOS":
        return "provided", MACOS_DIALECT_NOTE
    if name.startswith("errSSL"):
        return "provided", SSL_NOTE
    return "provided", ""


def usage_line(decl):
    n, k, t = decl["name"], decl["kind"], decl["swift"]
    if k == "constant":
        if t == "CFString":
            return f"q[{n} as String] = {n}; let _: CFString = {n}"
        return f"let _: {t} = {n}"
    if k == "status":
        return f"let _: {t} = {n}"
    if k == "function":
        return f"let _: {t} = {n}"
    if k == "type":
        return f"requireCFType({t}.self)"
    if k == "options":
        return f"let _: {t} = []"
    if k == "option":
        return f"let _: {decl['owner']} = .{decl['member']}"
    if k in ("typealias", "struct"):
        return f"let _: {t}.Type = {t}.self"
    raise ValueError(k)


LABEL = {"provided": "provided", "linux": "provided, Linux meaning", "unavailable": "unavailable", "missing": "**missing**"}
COUNT_TITLES = (("provided", "provided, Apple's meaning"), ("linux", "provided, a Linux meaning (decided)"),
                ("unavailable", "unavailable (decided)"), ("missing", "missing"))
PIECES_HEAD = ("## Core Foundation and Foundation\n\n| Declaration | Kind | Swift type | Source | Decision | Note |\n"
               "| --- | --- | --- | --- | --- | --- |\n")


def decide_pieces(found):
    """FOUNDATION_PIECES with each one's decision and note: (name, kind, swift, usage, note, source, decision)."""
    pieces = []
    for (name, kind, swift, usage, note, source) in FOUNDATION_PIECES:
        base = name.split(" ")[0].split(".")[0]
        have = found.get(base)
        if usage is None:
            decision = "unavailable" if have and have[1] else "missing"
            note = have[1] if have and have[1] else note
        else:
            decision = "linux" if note.startswith("Linux: ") else "provided"
            note = note[len("Linux: "):] if decision == "linux" else note
        pieces.append((name, kind, swift, usage, note, source, decision))
    return pieces


def count_pieces(pieces):
    pcounts = {"provided": 0, "linux": 0, "unavailable": 0, "missing": 0}
    for p in pieces:
        pcounts[p[6]] += 1
    return pcounts


def piece_table_rows(pieces):
    return [f"| `{name}` | {kind} | `{swift}` | {source} | {LABEL[decision]} | {note} |"
            for name, kind, swift, usage, note, source, decision in pieces]


def piece_usage_lines(pieces):
    lines = []
    for name, kind, swift, usage, note, source, decision in pieces:
        if usage is None:
            continue
        lines.append(f"        do {{  // {name}")
        if kind == "function":   # Apple's imported type (implicitly unwrapped parameters are optionals)
            lines.append(f"            let _: {swift} = {name}")
        lines.append("            " + usage.replace("\n        ", "\n            "))
        lines.append("        }")
    return lines


def pieces_only(check):
    """--pieces-only: rewrite only what FOUNDATION_PIECES decides in the committed table and usage file (the piece
    counts, the Core Foundation and Foundation rows, the pieces' unavailable rows and foundation()), keeping the
    Security headers' part as the last run with the headers wrote it. For a change to FOUNDATION_PIECES or to the
    sources on a machine without the headers."""
    found, _ = scan_sources()
    pieces = decide_pieces(found)
    pcounts = count_pieces(pieces)
    md = open(TABLE, encoding="utf-8").read()
    for key, title in COUNT_TITLES + (("declarations", "declarations"),):
        m = re.search(r"^\| " + re.escape(title) + r" \| (\d+) \| \d+ \| \d+ \|$", md, re.M)
        if not m:
            print(f"{os.path.relpath(TABLE, ROOT)}: no counts row '{title}'", file=sys.stderr)
            return 2
        sec = int(m.group(1))
        mine = sum(pcounts.values()) if key == "declarations" else pcounts[key]
        md = md[:m.start()] + f"| {title} | {sec} | {mine} | {sec + mine} |" + md[m.end():]
    # the pieces' own unavailable rows sit at the end of the unavailable table, after the headers' rows
    head = "## Unavailable, with the reason\n\n"
    start = md.index(head) + len(head)
    end = md.index("\n\n", start)
    sources = {p[5] for p in pieces}
    kept = [line for line in md[start:end].split("\n") if line.split(" | ")[1:2] and line.split(" | ")[1] not in sources]
    kept += [f"| `{p[0]}` | {p[5]} | {p[4]} |" for p in pieces if p[6] == "unavailable"]
    md = md[:start] + "\n".join(kept) + md[end:]
    start = md.index(PIECES_HEAD) + len(PIECES_HEAD)
    end = md.index("\n## Headers read")
    md = md[:start] + "\n".join(piece_table_rows(pieces)) + "\n" + md[end:]
    sw = open(USAGE, encoding="utf-8").read()
    used = sum(1 for p in pieces if p[3] is not None)
    sw = re.sub(r"(Core Foundation / Foundation pieces) \(\d+\)\.", rf"\1 ({used}).", sw)
    sw = re.sub(r"static let foundationPieces = \d+", f"static let foundationPieces = {used}", sw)
    start = sw.index("    static func foundation() {\n") + len("    static func foundation() {\n")
    end = sw.index("    }\n}\n\n@Suite")
    sw = sw[:start] + "\n".join(piece_usage_lines(pieces)) + "\n" + sw[end:]
    changed = []
    for path, text in ((TABLE, md), (USAGE, sw)):
        if open(path, encoding="utf-8").read() != text:
            changed.append(os.path.relpath(path, ROOT))
            if not check:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
    print(f"CF/Foundation: {pcounts['provided']} provided, {pcounts['linux']} Linux meaning, "
          f"{pcounts['unavailable']} unavailable, {pcounts['missing']} missing")
    if check and (changed or pcounts["missing"]):
        for c in changed:
            print(f"out of date: {c}", file=sys.stderr)
        return 1
    return 0


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    check = "--check" in argv
    if "--pieces-only" in argv and not args:
        return pieces_only(check)
    if len(args) != 1:
        print(__doc__.strip().split("\n")[2], file=sys.stderr)
        return 2
    folder = args[0]
    found, members = scan_sources()
    rows, infos, out_of_scope = [], [], []
    for header in HEADERS:
        path = os.path.join(folder, header)
        if not os.path.isfile(path):
            print(f"missing header: {header}", file=sys.stderr)
            return 2
        first, digest = header_info(path)
        infos.append((header, first, digest))
        seen = set()
        for decl in parse(path):
            if decl["name"] in seen:   # a declaration repeated for another platform (#if blocks)
                continue
            seen.add(decl["name"])
            if not in_scope(header, decl):
                out_of_scope.append((header, decl["name"]))
                continue
            decision, note = decide(decl, found, members)
            rows.append((header, decl, decision, note))
    counts = {"provided": 0, "linux": 0, "unavailable": 0, "missing": 0}
    for _, _, decision, _ in rows:
        counts[decision] += 1
    pieces = decide_pieces(found)
    pcounts = count_pieces(pieces)

    label = LABEL
    md = ["# Apple's Keychain surface", "",
          "Every declaration of the Security headers a Keychain wrapper can touch, and the Core Foundation and",
          "Foundation pieces Keychain code uses around them, with the Swift type Apple's importer gives it and what",
          "`import SecItem` does with it. Generated by `scripts/secitem-surface.py` from the headers listed at the end;",
          "`Tests/SecItemPortingTests/AppleSurfaceUsage.swift` (generated with it) uses every provided declaration the way",
          "Apple code does, in the Swift 6 and Swift 5 language modes, so a missing or mistyped symbol fails this package's",
          "build. Do not edit by hand.", "",
          "## Counts", "",
          "| | Security headers | Core Foundation and Foundation | total |",
          "| --- | --- | --- | --- |"]
    for key, title in COUNT_TITLES:
        md.append(f"| {title} | {counts[key]} | {pcounts[key]} | {counts[key] + pcounts[key]} |")
    total = sum(counts.values()) + sum(pcounts.values())
    md.append(f"| declarations | {sum(counts.values())} | {sum(pcounts.values())} | {total} |")
    md += ["", "Out of scope: the SecKey.h cryptography (SecKeyCreateSignature, SecKeyCreateEncryptedData, the",
           "SecKeyAlgorithm constants, SecKeyRaw…, SecPadding) and the OS X-only CSSM functions of SecKey.h and",
           "SecCertificate.h: they are not the keychain."]
    if out_of_scope:
        md += [f"The headers read declare {len(out_of_scope)} of them: " +
               ", ".join(f"`{name}`" for _, name in out_of_scope) + "."]
    md.append("")
    md += ["## Unavailable, with the reason", "", "| Declaration | Header | Reason |", "| --- | --- | --- |"]
    for header, decl, decision, note in rows:
        if decision == "unavailable":
            md.append(f"| `{decl['name']}` | {header} | {note} |")
    for p in pieces:
        if p[6] == "unavailable":
            md.append(f"| `{p[0]}` | {p[5]} | {p[4]} |")
    md.append("")
    current = None
    for header, decl, decision, note in rows:
        if header != current:
            current = header
            md += [f"## {header}", "", "| Declaration | Kind | Swift type | Apple platforms | Decision | Note |",
                   "| --- | --- | --- | --- | --- | --- |"]
        plat = {"macOS": "macOS only", "iOS": "iOS only", "": "iOS, macOS"}[decl["platform"]]
        if decl["deprecated"]:
            plat += ", deprecated"
        swift = decl["swift"].replace("|", "\\|")
        md.append(f"| `{decl['name']}` | {decl['kind']} | `{swift}` | {plat} | {label[decision]} | {note} |")
        if (rows.index((header, decl, decision, note)) + 1 == len(rows)) or rows[rows.index((header, decl, decision, note)) + 1][0] != header:
            md.append("")
    md += PIECES_HEAD.rstrip("\n").split("\n")
    md += piece_table_rows(pieces)
    md += ["", "## Headers read", "", "| Header | First line | SHA-256 |", "| --- | --- | --- |"]
    for header, first, digest in infos:
        md.append(f"| {header} | {first.replace('|', '/')} | `{digest[:16]}…` |")
    md.append("")
    table = "\n".join(md)

    provided = [(h, d) for h, d, dec, _ in rows if dec in ("provided", "linux")]
    deprecated_rows = [(h, d) for h, d in provided if d["deprecated"]]
    current_rows = [(h, d) for h, d in provided if not d["deprecated"]]
    sw = ["// Generated by scripts/secitem-surface.py from Apple's Security headers: do not edit.",
          "// Every declaration Sources/SecItem/SecItem.docc/AppleSurface.md lists as provided, used the way Apple code uses",
          "// it (constants as dictionary keys and values, functions assigned to Apple's imported Swift type, CF types as",
          "// Hashable objects). Compiled in the Swift 6 and Swift 5 language modes (SecItemPortingSwift5Tests).",
          "import Foundation", "import SecItem", "import Testing", "",
          "private func requireCFType<T: AnyObject & Hashable & CustomStringConvertible>(_ type: T.Type) {}", "",
          "enum AppleSurfaceUsage {",
          f"    /// Security-header declarations used below ({len(provided)}) and Core Foundation / Foundation pieces"
          f" ({sum(1 for p in pieces if p[3] is not None)}).",
          f"    static let securityDeclarations = {len(provided)}",
          f"    static let foundationPieces = {sum(1 for p in pieces if p[3] is not None)}", "",
          "    static func security() {",
          "        var q: [String: Any] = [:]"]
    for header, decl in current_rows:
        sw.append("        " + usage_line(decl))
    sw += ["        _ = q as CFDictionary", "    }", "",
           "    /// Apple deprecates these; using them in a deprecated context keeps the build free of warnings.",
           '    @available(*, deprecated, message: "uses deprecated declarations on purpose")',
           "    static func deprecatedSecurity() {",
           "        var q: [String: Any] = [:]"]
    for header, decl in deprecated_rows:
        sw.append("        " + usage_line(decl))
    sw += ["        _ = q as CFDictionary", "    }", "", "    static func foundation() {"]
    sw += piece_usage_lines(pieces)
    sw += ["    }", "}", "",
           "@Suite(\"Apple's Keychain surface (generated)\") struct AppleSurfaceTests {",
           "    @Test(\"every provided declaration compiles as Apple code uses it, and runs\")",
           "    func surface() {",
           "        AppleSurfaceUsage.security()",
           "        AppleSurfaceUsage.foundation()",
           f"        #expect(AppleSurfaceUsage.securityDeclarations == {len(provided)})",
           "    }", "}", ""]
    swift_text = "\n".join(sw)

    missing = counts["missing"] + pcounts["missing"]
    changed = []
    for path, text in ((TABLE, table), (USAGE, swift_text)):
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old != text:
            changed.append(os.path.relpath(path, ROOT))
            if not check:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
    summary = (f"Security headers: {counts['provided']} provided, {counts['linux']} Linux meaning, "
               f"{counts['unavailable']} unavailable, {counts['missing']} missing; CF/Foundation: {pcounts['provided']} provided, "
               f"{pcounts['linux']} Linux meaning, {pcounts['unavailable']} unavailable, {pcounts['missing']} missing")
    print(summary)
    for header, decl, decision, note in rows:
        if decision == "missing":
            print(f"missing: {decl['name']} ({header}, {decl['kind']}, {decl['swift']})")
    if check and (changed or missing):
        for c in changed:
            print(f"out of date: {c}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
