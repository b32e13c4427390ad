// The Security framework's other Core Foundation types a keychain wrapper touches (SecBase.h, SecKey.h,
// SecCertificate.h, SecIdentity.h), with the Linux meaning of each function; the generated surface table
// (SecItem.docc/AppleSurface.md) lists every declaration and its decision.
//
// Each type is an immutable NSObject, so, as every CF type on Apple platforms, it is `Hashable`, `Equatable`
// (`CFEqual`: same contents), `CustomStringConvertible` and a `CFTypeRef`.
//
// What Linux here does not do is cryptography with keys and certificates: no key generation, no parsing of
// a certificate beyond its DER framing and serial number. Those functions exist with Apple's types and fail
// the way Apple's do when an operation cannot be performed (nil and a CFError, or a status), with
// `errSecUnimplemented`, so a wrapper that also has a key or certificate feature compiles and its password
// features work.

public import Foundation

// MARK: SecKey

/// A key (`SecKeyRef`): the external representation and the attributes it was created with
/// (``SecKeyCreateWithData(_:_:_:)``). Keys cannot be generated or used for cryptography here.
public final class SecKey: NSObject, @unchecked Sendable {
    let keyData: Data
    /// An immutable copy of the attributes (kSecAttrKeyType, kSecAttrKeyClass, …), keyed by the kSec strings.
    let keyAttributes: [String: NSObject]

    init(keyData: Data, attributes: [String: NSObject]) {
        self.keyData = keyData
        self.keyAttributes = attributes
        super.init()
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? SecKey else { return false }
        return other.keyData == keyData && NSDictionary(dictionary: other.keyAttributes).isEqual(to: keyAttributes as [String: Any])
    }

    public override var hash: Int { keyData.hashValue }

    public override var description: String {
        let type = keyAttributes[kSecAttrKeyType as String].map { "\($0)" } ?? "?"
        let keyClass = keyAttributes[kSecAttrKeyClass as String].map { "\($0)" } ?? "?"
        return "<SecKey algorithm id: \(type), key class: \(keyClass), \(keyData.count) bytes>"
    }
}

/// `SecKeyGetTypeID`.
public func SecKeyGetTypeID() -> CFTypeID { TypeIDs.key }

/// The CFError an unavailable operation reports (domain `NSOSStatusErrorDomain`), as Apple's do.
func statusError(_ status: OSStatus, _ reason: String,
                 _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) {
    error?.pointee = Unmanaged.passRetained(NSError(domain: kCFErrorDomainOSStatus as String, code: Int(status),
                                                    userInfo: [NSLocalizedDescriptionKey: reason]))
}

/// `SecKeyCreateRandomKey`: key generation is not available on Linux here; returns nil with a CFError
/// (`errSecUnimplemented`).
public func SecKeyCreateRandomKey(_ parameters: CFDictionary,
                                  _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> SecKey? {
    statusError(errSecUnimplemented, "SecKeyCreateRandomKey: key generation is not available on Linux.", error)
    return nil
}

/// `SecKeyGeneratePair`: key generation is not available on Linux here; returns `errSecUnimplemented`.
public func SecKeyGeneratePair(_ parameters: CFDictionary, _ publicKey: UnsafeMutablePointer<SecKey?>?,
                               _ privateKey: UnsafeMutablePointer<SecKey?>?) -> OSStatus {
    errSecUnimplemented
}

/// `SecKeyCreateWithData`: a key holding `keyData` and `attributes` (which must name `kSecAttrKeyType` and
/// `kSecAttrKeyClass`, as on Apple platforms). The bytes are kept as given; they are not checked against the
/// key type.
public func SecKeyCreateWithData(_ keyData: CFData, _ attributes: CFDictionary,
                                 _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> SecKey? {
    var copied: [String: NSObject] = [:]
    for (key, value) in attributes {
        guard let name = key as? String, let object = objectForm(value) else { continue }
        copied[name] = object
    }
    guard copied[kSecAttrKeyType as String] != nil, copied[kSecAttrKeyClass as String] != nil else {
        statusError(errSecParam, "SecKeyCreateWithData: the attributes must name kSecAttrKeyType and kSecAttrKeyClass.", error)
        return nil
    }
    return SecKey(keyData: Data(referencing: keyData), attributes: copied)
}

/// `SecKeyGetBlockSize`: `kSecAttrKeySizeInBits` / 8 when the key's attributes give it, else 0.
public func SecKeyGetBlockSize(_ key: SecKey) -> Int {
    guard let bits = key.keyAttributes[kSecAttrKeySizeInBits as String] else { return 0 }
    if let n = bits as? NSNumber { return max(0, n.intValue) / 8 }
    if let s = bits as? NSString, let n = Int(s as String) { return max(0, n) / 8 }
    return 0
}

/// `SecKeyCopyExternalRepresentation`: the bytes the key was created with.
public func SecKeyCopyExternalRepresentation(_ key: SecKey,
                                             _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> CFData? {
    NSData(data: key.keyData)
}

/// `SecKeyCopyAttributes`: the attributes the key was created with.
public func SecKeyCopyAttributes(_ key: SecKey) -> CFDictionary? {
    NSDictionary(dictionary: key.keyAttributes)
}

/// `SecKeyCopyPublicKey`: the key itself when it is a public key; nil otherwise (deriving a public key is
/// cryptography, not available here).
public func SecKeyCopyPublicKey(_ key: SecKey) -> SecKey? {
    guard let keyClass = key.keyAttributes[kSecAttrKeyClass as String] else { return nil }
    return keyClass.isEqual(kSecAttrKeyClassPublic) ? key : nil
}

// MARK: SecCertificate

/// An X.509 certificate (`SecCertificateRef`): its DER bytes.
public final class SecCertificate: NSObject, @unchecked Sendable {
    let der: Data

    init(der: Data) {
        self.der = der
        super.init()
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? SecCertificate else { return false }
        return other.der == der
    }

    public override var hash: Int { der.hashValue }

    public override var description: String { "<SecCertificate \(der.count) bytes>" }
}

/// `SecCertificateGetTypeID`.
public func SecCertificateGetTypeID() -> CFTypeID { TypeIDs.certificate }

/// One DER element: its tag and the range of its contents.
private struct DERElement {
    let tag: UInt8
    let contents: Range<Int>
    let end: Int

    /// The element starting at `start` in `bytes`, or nil when its framing is not valid DER.
    init?(_ bytes: [UInt8], at start: Int, limit: Int) {
        guard start + 2 <= limit else { return nil }
        tag = bytes[start]
        var index = start + 1
        let first = Int(bytes[index])
        index += 1
        var length = 0
        if first < 0x80 {
            length = first
        } else {
            let count = first & 0x7f
            guard count >= 1, count <= 4, index + count <= limit else { return nil }
            for _ in 0..<count {
                length = (length << 8) | Int(bytes[index])
                index += 1
            }
            guard length >= 0x80 else { return nil }   // DER: the shortest form
        }
        guard length <= limit - index else { return nil }
        contents = index..<(index + length)
        end = index + length
    }
}

/// The certificate's three top-level parts when `der` is framed as an X.509 certificate (a SEQUENCE of
/// tbsCertificate SEQUENCE, algorithm SEQUENCE, signature BIT STRING, spanning the whole data).
private func certificateParts(_ der: [UInt8]) -> DERElement? {
    guard let outer = DERElement(der, at: 0, limit: der.count), outer.tag == 0x30, outer.end == der.count,
          let tbs = DERElement(der, at: outer.contents.lowerBound, limit: outer.contents.upperBound), tbs.tag == 0x30,
          let algorithm = DERElement(der, at: tbs.end, limit: outer.contents.upperBound), algorithm.tag == 0x30,
          let signature = DERElement(der, at: algorithm.end, limit: outer.contents.upperBound), signature.tag == 0x03,
          signature.end == outer.contents.upperBound else { return nil }
    return tbs
}

/// `SecCertificateCreateWithData`: a certificate for DER `data` framed as an X.509 certificate; nil otherwise.
public func SecCertificateCreateWithData(_ allocator: CFAllocator?, _ data: CFData) -> SecCertificate? {
    let der = Data(referencing: data)
    guard certificateParts([UInt8](der)) != nil else { return nil }
    return SecCertificate(der: der)
}

/// `SecCertificateCopyData`: the certificate's DER bytes.
public func SecCertificateCopyData(_ certificate: SecCertificate) -> CFData {
    NSData(data: certificate.der)
}

/// `SecCertificateCopySubjectSummary`: nil (names are not parsed here).
public func SecCertificateCopySubjectSummary(_ certificate: SecCertificate) -> CFString? { nil }

/// `SecCertificateCopyCommonName`: `errSecUnimplemented` (names are not parsed here).
public func SecCertificateCopyCommonName(_ certificate: SecCertificate,
                                         _ commonName: UnsafeMutablePointer<CFString?>) -> OSStatus {
    commonName.pointee = nil
    return errSecUnimplemented
}

/// `SecCertificateCopyEmailAddresses`: `errSecUnimplemented` (names are not parsed here).
public func SecCertificateCopyEmailAddresses(_ certificate: SecCertificate,
                                             _ emailAddresses: UnsafeMutablePointer<CFArray?>) -> OSStatus {
    emailAddresses.pointee = nil
    return errSecUnimplemented
}

/// `SecCertificateCopyNormalizedIssuerSequence`: nil (names are not normalized here).
public func SecCertificateCopyNormalizedIssuerSequence(_ certificate: SecCertificate) -> CFData? { nil }

/// `SecCertificateCopyNormalizedSubjectSequence`: nil (names are not normalized here).
public func SecCertificateCopyNormalizedSubjectSequence(_ certificate: SecCertificate) -> CFData? { nil }

/// `SecCertificateCopyKey`: nil (public keys are not extracted here).
public func SecCertificateCopyKey(_ certificate: SecCertificate) -> SecKey? { nil }

/// `SecCertificateCopyPublicKey` (iOS form): nil (public keys are not extracted here).
@available(*, deprecated, renamed: "SecCertificateCopyKey")
public func SecCertificateCopyPublicKey(_ certificate: SecCertificate) -> SecKey? { nil }

/// `SecCertificateCopySerialNumberData`: the contents of the certificate's serialNumber INTEGER.
public func SecCertificateCopySerialNumberData(_ certificate: SecCertificate,
                                               _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> CFData? {
    let der = [UInt8](certificate.der)
    guard let tbs = certificateParts(der), var field = DERElement(der, at: tbs.contents.lowerBound, limit: tbs.end) else {
        statusError(errSecDecode, "SecCertificateCopySerialNumberData: the certificate could not be decoded.", error)
        return nil
    }
    if field.tag == 0xa0 {   // [0] EXPLICIT version
        guard let next = DERElement(der, at: field.end, limit: tbs.end) else {
            statusError(errSecDecode, "SecCertificateCopySerialNumberData: the certificate could not be decoded.", error)
            return nil
        }
        field = next
    }
    guard field.tag == 0x02 else {
        statusError(errSecDecode, "SecCertificateCopySerialNumberData: the certificate has no serial number.", error)
        return nil
    }
    return NSData(data: Data(der[field.contents]))
}

/// `SecCertificateCopySerialNumber` (iOS form).
@available(*, deprecated, renamed: "SecCertificateCopySerialNumberData")
public func SecCertificateCopySerialNumber(_ certificate: SecCertificate) -> CFData? {
    SecCertificateCopySerialNumberData(certificate, nil)
}

// MARK: SecIdentity

/// An identity (`SecIdentityRef`): a certificate and its private key. Nothing on Linux here makes one
/// (identities come from keychain items of class kSecClassIdentity, which hold no key material here).
public final class SecIdentity: NSObject, @unchecked Sendable {
    let certificate: SecCertificate
    let privateKey: SecKey

    init(certificate: SecCertificate, privateKey: SecKey) {
        self.certificate = certificate
        self.privateKey = privateKey
        super.init()
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? SecIdentity else { return false }
        return other.certificate.isEqual(certificate) && other.privateKey.isEqual(privateKey)
    }

    public override var hash: Int { certificate.hash }

    public override var description: String { "<SecIdentity \(certificate.description)>" }
}

/// `SecIdentityGetTypeID`.
public func SecIdentityGetTypeID() -> CFTypeID { TypeIDs.identity }

/// `SecIdentityCopyCertificate`.
public func SecIdentityCopyCertificate(_ identityRef: SecIdentity,
                                       _ certificateRef: UnsafeMutablePointer<SecCertificate?>) -> OSStatus {
    certificateRef.pointee = identityRef.certificate
    return errSecSuccess
}

/// `SecIdentityCopyPrivateKey`.
public func SecIdentityCopyPrivateKey(_ identityRef: SecIdentity,
                                      _ privateKeyRef: UnsafeMutablePointer<SecKey?>) -> OSStatus {
    privateKeyRef.pointee = identityRef.privateKey
    return errSecSuccess
}

// MARK: SecPolicy

/// A certificate trust policy (`SecPolicyRef`, the value of `kSecMatchPolicy`). Trust evaluation is not part
/// of this module: no function makes one; the type exists so that code naming it compiles.
public final class SecPolicy: NSObject, @unchecked Sendable {}

// MARK: The macOS file keychain (SecBase.h, SecIdentity.h): unavailable

// The macOS file keychain's types and functions are unavailable on iOS, and here: Linux has the data protection
// keychain's model only (the SecItem functions). Code that uses them is `#if os(macOS)` code.

@available(*, unavailable, message: "the macOS file keychain does not exist on Linux; use the SecItem functions")
public final class SecKeychain {}
@available(*, unavailable, message: "the macOS file keychain does not exist on Linux; use the SecItem functions")
public final class SecKeychainItem {}
@available(*, unavailable, message: "the macOS file keychain does not exist on Linux; use the SecItem functions")
public final class SecKeychainSearch {}
@available(*, unavailable, message: "the macOS file keychain does not exist on Linux; use the SecItem functions")
public typealias SecKeychainAttrType = UInt32
@available(*, unavailable, message: "the macOS file keychain does not exist on Linux; use the SecItem functions")
public struct SecKeychainAttribute {}
@available(*, unavailable, message: "the macOS file keychain does not exist on Linux; use the SecItem functions")
public typealias SecKeychainAttributePtr = UnsafeMutableRawPointer
@available(*, unavailable, message: "the macOS file keychain does not exist on Linux; use the SecItem functions")
public struct SecKeychainAttributeList {}
@available(*, unavailable, message: "the macOS file keychain does not exist on Linux; use the SecItem functions")
public typealias SecKeychainStatus = UInt32
@available(*, unavailable, message: "the macOS file keychain does not exist on Linux; use the SecItem functions")
public struct SecKeychainAttributeInfo {}
@available(*, unavailable, message: "macOS access control lists (SecAccess) do not exist on Linux; use kSecAttrAccessible or SecAccessControlCreateWithFlags")
public final class SecTrustedApplication {}
@available(*, unavailable, message: "macOS access control lists (SecAccess) do not exist on Linux; use kSecAttrAccessible or SecAccessControlCreateWithFlags")
public final class SecAccess {}
@available(*, unavailable, message: "macOS access control lists (SecAccess) do not exist on Linux; use kSecAttrAccessible or SecAccessControlCreateWithFlags")
public final class SecACL {}
@available(*, unavailable, message: "the macOS file keychain does not exist on Linux; use the SecItem functions")
public final class SecPassword {}

@available(*, unavailable, message: "macOS identity preferences do not exist on Linux; find the identity with SecItemCopyMatching")
public func SecIdentityCreateWithCertificate(_ keychainOrArray: CFTypeRef?, _ certificateRef: SecCertificate,
                                             _ identityRef: UnsafeMutablePointer<SecIdentity?>) -> OSStatus { errSecUnimplemented }
@available(*, unavailable, message: "macOS identity preferences (CSSM key usage) do not exist on Linux; find the identity with SecItemCopyMatching")
public func SecIdentityCopyPreference(_ name: CFString, _ keyUsage: UInt32, _ validIssuers: CFArray?,
                                      _ identity: UnsafeMutablePointer<SecIdentity?>) -> OSStatus { errSecUnimplemented }
@available(*, unavailable, message: "macOS identity preferences do not exist on Linux; find the identity with SecItemCopyMatching")
public func SecIdentityCopyPreferred(_ name: CFString, _ keyUsage: CFArray?, _ validIssuers: CFArray?) -> SecIdentity? { nil }
@available(*, unavailable, message: "macOS identity preferences (CSSM key usage) do not exist on Linux")
public func SecIdentitySetPreference(_ identity: SecIdentity, _ name: CFString, _ keyUsage: UInt32) -> OSStatus { errSecUnimplemented }
@available(*, unavailable, message: "macOS identity preferences do not exist on Linux")
public func SecIdentitySetPreferred(_ identity: SecIdentity?, _ name: CFString, _ keyUsage: CFArray?) -> OSStatus { errSecUnimplemented }
@available(*, unavailable, message: "macOS system identities do not exist on Linux")
public func SecIdentityCopySystemIdentity(_ domain: CFString, _ idRef: UnsafeMutablePointer<SecIdentity?>,
                                          _ actualDomain: UnsafeMutablePointer<CFString?>?) -> OSStatus { errSecUnimplemented }
@available(*, unavailable, message: "macOS system identities do not exist on Linux")
public func SecIdentitySetSystemIdentity(_ domain: CFString, _ idRef: SecIdentity?) -> OSStatus { errSecUnimplemented }
@available(*, unavailable, message: "macOS system identities do not exist on Linux")
nonisolated(unsafe) public let kSecIdentityDomainDefault: CFString = "com.apple.systemdefault"
@available(*, unavailable, message: "macOS system identities do not exist on Linux")
nonisolated(unsafe) public let kSecIdentityDomainKerberosKDC: CFString = "com.apple.kerberos.kdc"
