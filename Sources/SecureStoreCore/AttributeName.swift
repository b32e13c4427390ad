/// The kind of value an attribute holds; decides how values are checked, normalized and compared.
public enum AttributeKind: String, Sendable, Hashable {
    /// Text: a `String` or `Data`, compared by UTF-8 bytes (case-insensitively on request).
    case text
    /// Bytes: a `Data` or `String`, always compared by bytes.
    case data
    /// An integer. Booleans read as 0/1, numeric strings as numbers.
    case number
    /// A flag. Numbers read as false (0) / true (anything else).
    case bool
    /// A point in time.
    case date
    /// A number or, failing that, text (Apple stores `kSecAttrProtocol` as a number attribute that keeps a
    /// string it cannot read as a number): numbers stay numbers, booleans read as 0/1, a string that is a
    /// plain decimal integer (`"80"`, as Apple's conversion prints it back) becomes that number, any other
    /// string (`"htps"`) stays text. A number never equals a text value.
    case numberOrText
    /// Text or a number, each kept as given (Apple stores `kSecAttrAuthenticationType` as a blob attribute that
    /// keeps strings, data and numbers alike; booleans read as 0/1): text compares by bytes like ``text``,
    /// numbers by value, and a number never equals a text value.
    case textOrNumber
}

/// An item attribute, named by Apple's `kSecAttr…` string value (`"svce"` for the service).
///
/// Equality and hashing use the code only. `keyType` and `type` share Apple's code `"type"`.
public struct AttributeName: Hashable, Sendable, CustomStringConvertible, Comparable {
    /// Apple's string value of the `kSecAttr…` constant.
    public var code: String { Self.text(codeText) }
    /// A readable name (`"service"`), used in messages, the CLI and mappings.
    public var name: String { Self.text(nameText) }
    /// The kind of value the attribute holds.
    public let kind: AttributeKind

    /// The code and name as static text: an attribute name is plain bytes, copied and dropped without
    /// reference counting (attribute dictionaries are built, probed and freed on every operation).
    private let codeText: StaticString, nameText: StaticString
    /// The code's bytes packed into one word (big-endian, zero-padded): compared and hashed instead of the
    /// text. Apple's codes are four bytes; `keyType` and `type` share their code, so their word.
    private let packed: UInt64

    /// The attribute's bit in a class's set of attributes (``ItemClass/defines(_:)``): one per code.
    private let bit: UInt64

    init(_ code: StaticString, _ name: StaticString, _ kind: AttributeKind, bit: Int) {
        precondition(code.utf8CodeUnitCount <= 8, "An attribute code is Apple's four-character code.")
        precondition(bit < 64, "Every attribute code has a bit of its own.")
        self.bit = 1 << UInt64(bit)
        codeText = code
        nameText = name
        self.kind = kind
        packed = code.withUTF8Buffer { $0.reduce(0) { $0 << 8 | UInt64($1) } << (8 * UInt64(8 - $0.count)) }
    }

    /// Lends the code's UTF-8 bytes in place (static text: no string is made).
    package func withCodeUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        codeText.withUTF8Buffer(body)
    }

    private static func text(_ s: StaticString) -> String {
        s.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
    }

    /// Codes of up to eight bytes pack without loss, so equal words are equal codes.
    public static func == (a: AttributeName, b: AttributeName) -> Bool { a.packed == b.packed }
    public static func < (a: AttributeName, b: AttributeName) -> Bool { a.code < b.code }
    /// Byte order of the codes (what ``ItemRecord`` keeps and the sealed format writes): the packed words
    /// compared, which is byte order for codes of up to eight bytes without a 0 byte (every code).
    package func sortsBefore(_ other: AttributeName) -> Bool { packed < other.packed }

    /// The record slot of the attributes every query reads (``ItemRecord``), else nil.
    package var fixedSlot: Int? {
        guard packed & 0xFFFF_FFFF == 0 else { return nil }   // a code longer than four bytes: none is fixed
        return switch packed >> 32 {
        case 0x70646D6E: 0   // pdmn
        case 0x61677270: 1   // agrp
        case 0x73796E63: 2   // sync
        case 0x63646174: 3   // cdat
        case 0x6D646174: 4   // mdat
        case 0x73766365: 5   // svce
        case 0x73727672: 6   // srvr
        case 0x61636374: 7   // acct
        default: nil
        }
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(packed) }
    public var description: String { "\(name) (\(code))" }

    // Every class.
    public static let accessible = AttributeName("pdmn", "accessible", .text, bit: 0)
    public static let accessGroup = AttributeName("agrp", "accessGroup", .text, bit: 1)
    public static let synchronizable = AttributeName("sync", "synchronizable", .bool, bit: 2)
    public static let creationDate = AttributeName("cdat", "creationDate", .date, bit: 3)
    public static let modificationDate = AttributeName("mdat", "modificationDate", .date, bit: 4)
    public static let label = AttributeName("labl", "label", .text, bit: 5)
    // Passwords.
    public static let description = AttributeName("desc", "description", .text, bit: 6)
    public static let comment = AttributeName("icmt", "comment", .text, bit: 7)
    public static let creator = AttributeName("crtr", "creator", .number, bit: 8)
    public static let type = AttributeName("type", "type", .number, bit: 9)
    public static let isInvisible = AttributeName("invi", "isInvisible", .bool, bit: 10)
    public static let isNegative = AttributeName("nega", "isNegative", .bool, bit: 11)
    public static let account = AttributeName("acct", "account", .text, bit: 12)
    public static let service = AttributeName("svce", "service", .text, bit: 13)
    public static let generic = AttributeName("gena", "generic", .data, bit: 14)
    public static let securityDomain = AttributeName("sdmn", "securityDomain", .text, bit: 15)
    public static let server = AttributeName("srvr", "server", .text, bit: 16)
    public static let `protocol` = AttributeName("ptcl", "protocol", .numberOrText, bit: 17)
    public static let authenticationType = AttributeName("atyp", "authenticationType", .textOrNumber, bit: 18)
    public static let port = AttributeName("port", "port", .number, bit: 19)
    public static let path = AttributeName("path", "path", .text, bit: 20)
    // Certificates.
    public static let certificateType = AttributeName("ctyp", "certificateType", .number, bit: 21)
    public static let certificateEncoding = AttributeName("cenc", "certificateEncoding", .number, bit: 22)
    public static let subject = AttributeName("subj", "subject", .data, bit: 23)
    public static let issuer = AttributeName("issr", "issuer", .data, bit: 24)
    public static let serialNumber = AttributeName("slnr", "serialNumber", .data, bit: 25)
    public static let subjectKeyID = AttributeName("skid", "subjectKeyID", .data, bit: 26)
    public static let publicKeyHash = AttributeName("pkhh", "publicKeyHash", .data, bit: 27)
    // Keys.
    public static let keyClass = AttributeName("kcls", "keyClass", .number, bit: 28)
    public static let applicationLabel = AttributeName("klbl", "applicationLabel", .data, bit: 29)
    public static let isPermanent = AttributeName("perm", "isPermanent", .bool, bit: 30)
    public static let applicationTag = AttributeName("atag", "applicationTag", .data, bit: 31)
    public static let keyType = AttributeName("type", "keyType", .number, bit: 9)
    public static let keySizeInBits = AttributeName("bsiz", "keySizeInBits", .number, bit: 32)
    public static let effectiveKeySize = AttributeName("esiz", "effectiveKeySize", .number, bit: 33)
    public static let canEncrypt = AttributeName("encr", "canEncrypt", .bool, bit: 34)
    public static let canDecrypt = AttributeName("decr", "canDecrypt", .bool, bit: 35)
    public static let canDerive = AttributeName("drve", "canDerive", .bool, bit: 36)
    public static let canSign = AttributeName("sign", "canSign", .bool, bit: 37)
    public static let canVerify = AttributeName("vrfy", "canVerify", .bool, bit: 38)
    public static let canWrap = AttributeName("wrap", "canWrap", .bool, bit: 39)
    public static let canUnwrap = AttributeName("unwp", "canUnwrap", .bool, bit: 40)
    public static let isSensitive = AttributeName("sens", "isSensitive", .bool, bit: 41)
    public static let isExtractable = AttributeName("extr", "isExtractable", .bool, bit: 42)
    public static let startDate = AttributeName("sdat", "startDate", .date, bit: 43)
    public static let endDate = AttributeName("edat", "endDate", .date, bit: 44)

    static let common: [AttributeName] = [
        .accessible, .accessGroup, .synchronizable, .creationDate, .modificationDate, .label,
    ]
    static let passwordCommon: [AttributeName] = [
        .description, .comment, .creator, .type, .isInvisible, .isNegative, .account,
    ]
    static let genericOnly: [AttributeName] = [.service, .generic]
    static let internetOnly: [AttributeName] = [
        .securityDomain, .server, .protocol, .authenticationType, .port, .path,
    ]
    static let certificateOnly: [AttributeName] = [
        .certificateType, .certificateEncoding, .subject, .issuer, .serialNumber, .subjectKeyID, .publicKeyHash,
    ]
    static let keyOnly: [AttributeName] = [
        .keyClass, .applicationLabel, .isPermanent, .applicationTag, .keyType, .keySizeInBits, .effectiveKeySize,
        .canEncrypt, .canDecrypt, .canDerive, .canSign, .canVerify, .canWrap, .canUnwrap, .isSensitive,
        .isExtractable, .startDate, .endDate, .creator,
    ]

    // One set per class, chosen by a switch (a dictionary keyed by the class would hash its raw string on
    // every query).
    private static let genericPasswordAttributes = Set(common + passwordCommon + genericOnly)
    private static let internetPasswordAttributes = Set(common + passwordCommon + internetOnly)
    private static let certificateAttributes = Set(common + certificateOnly)
    private static let keyAttributes = Set(common + keyOnly)
    private static let identityAttributes = Set(common + certificateOnly + keyOnly)

    // The same sets as bits: whether a class defines an attribute is one AND (no hashing), on every attribute of
    // every add, query and update.
    private static let genericPasswordBits = bits(of: genericPasswordAttributes)
    private static let internetPasswordBits = bits(of: internetPasswordAttributes)
    private static let certificateBits = bits(of: certificateAttributes)
    private static let keyClassBits = bits(of: keyAttributes)
    private static let identityBits = bits(of: identityAttributes)

    private static func bits(of names: some Sequence<AttributeName>) -> UInt64 { names.reduce(0) { $0 | $1.bit } }

    static func definedBits(of itemClass: ItemClass) -> AttributeBits {
        let raw = switch itemClass {
        case .genericPassword: genericPasswordBits
        case .internetPassword: internetPasswordBits
        case .certificate: certificateBits
        case .key: keyClassBits
        case .identity: identityBits
        }
        return AttributeBits(raw: raw)
    }

    // Each class's key attributes but group and sync, as bits (``ItemClass/hasInKey(_:)``).
    private static let genericPasswordKeyBits = keyBits(genericPasswordKey)
    private static let internetPasswordKeyBits = keyBits(internetPasswordKey)
    private static let certificateKeyBits = keyBits(certificateKey)
    private static let keyKeyBits = keyBits(keyKey)

    private static func keyBits(_ key: [AttributeName]) -> UInt64 {
        bits(of: key.filter { $0 != .accessGroup && $0 != .synchronizable })
    }

    static func keyBitsButGroupAndSync(of itemClass: ItemClass) -> AttributeBits {
        let raw = switch itemClass {
        case .genericPassword: genericPasswordKeyBits
        case .internetPassword: internetPasswordKeyBits
        case .certificate, .identity: certificateKeyBits
        case .key: keyKeyBits
        }
        return AttributeBits(raw: raw)
    }

    /// Whether this name's bit is in `bits`.
    func isIn(_ bits: UInt64) -> Bool { bit & bits != 0 }

    static func attributes(of itemClass: ItemClass) -> Set<AttributeName> {
        switch itemClass {
        case .genericPassword: genericPasswordAttributes
        case .internetPassword: internetPasswordAttributes
        case .certificate: certificateAttributes
        case .key: keyAttributes
        case .identity: identityAttributes
        }
    }

    static func uniqueness(of itemClass: ItemClass) -> [AttributeName] {
        // Built once: this runs on every query and every record.
        switch itemClass {
        case .genericPassword: genericPasswordKey
        case .internetPassword: internetPasswordKey
        case .certificate, .identity: certificateKey
        case .key: keyKey
        }
    }
    private static let genericPasswordKey: [AttributeName] = [.account, .service, .accessGroup, .synchronizable]
    private static let internetPasswordKey: [AttributeName] = [
        .account, .securityDomain, .server, .protocol, .authenticationType, .port, .path, .accessGroup, .synchronizable,
    ]
    private static let certificateKey: [AttributeName] = [
        .certificateType, .issuer, .serialNumber, .accessGroup, .synchronizable,
    ]
    private static let keyKey: [AttributeName] = [
        .keyClass, .keyType, .applicationLabel, .applicationTag, .keySizeInBits, .effectiveKeySize, .creator,
        .accessGroup, .synchronizable,
    ]

    /// Every attribute any class defines (the key class's `keyType` is the same attribute as `type`).
    public static let all: [AttributeName] = {
        var seen = Set<String>()
        return (common + passwordCommon + genericOnly + internetOnly + certificateOnly + keyOnly)
            .filter { seen.insert($0.code).inserted }
    }()

    /// The attribute with Apple's code (`"svce"`) or readable name (`"service"`), if there is one.
    public init?(codeOrName: String) {
        if let a = AttributeName.byCode[codeOrName] ?? AttributeName.byName[codeOrName.lowercased()] {
            self = a
        } else {
            return nil
        }
    }

    /// The attribute whose code has these UTF-8 bytes (for decoders: no string is built on the way).
    package static func withCode(utf8 bytes: ArraySlice<UInt8>) -> AttributeName? {
        guard bytes.count == 4 else {
            return String(validating: bytes, as: UTF8.self).flatMap { byCode[$0] }
        }
        var packed: UInt32 = 0
        for b in bytes { packed = packed << 8 | UInt32(b) }
        return withPackedCode(packed)
    }

    /// The attribute whose four-byte code, packed big-endian, is `packed`: a switch (no table to hash or
    /// search; a decoder looks up every attribute of every record it reads).
    /// `RepresentationTests` checks it against ``all``.
    package static func withPackedCode(_ packed: UInt32) -> AttributeName? {
        switch packed {
        case 0x61636374: .account   // acct
        case 0x61677270: .accessGroup   // agrp
        case 0x61746167: .applicationTag   // atag
        case 0x61747970: .authenticationType   // atyp
        case 0x6273697A: .keySizeInBits   // bsiz
        case 0x63646174: .creationDate   // cdat
        case 0x63656E63: .certificateEncoding   // cenc
        case 0x63727472: .creator   // crtr
        case 0x63747970: .certificateType   // ctyp
        case 0x64656372: .canDecrypt   // decr
        case 0x64657363: .description   // desc
        case 0x64727665: .canDerive   // drve
        case 0x65646174: .endDate   // edat
        case 0x656E6372: .canEncrypt   // encr
        case 0x6573697A: .effectiveKeySize   // esiz
        case 0x65787472: .isExtractable   // extr
        case 0x67656E61: .generic   // gena
        case 0x69636D74: .comment   // icmt
        case 0x696E7669: .isInvisible   // invi
        case 0x69737372: .issuer   // issr
        case 0x6B636C73: .keyClass   // kcls
        case 0x6B6C626C: .applicationLabel   // klbl
        case 0x6C61626C: .label   // labl
        case 0x6D646174: .modificationDate   // mdat
        case 0x6E656761: .isNegative   // nega
        case 0x70617468: .path   // path
        case 0x70646D6E: .accessible   // pdmn
        case 0x7065726D: .isPermanent   // perm
        case 0x706B6868: .publicKeyHash   // pkhh
        case 0x706F7274: .port   // port
        case 0x7074636C: .`protocol`   // ptcl
        case 0x73646174: .startDate   // sdat
        case 0x73646D6E: .securityDomain   // sdmn
        case 0x73656E73: .isSensitive   // sens
        case 0x7369676E: .canSign   // sign
        case 0x736B6964: .subjectKeyID   // skid
        case 0x736C6E72: .serialNumber   // slnr
        case 0x73727672: .server   // srvr
        case 0x7375626A: .subject   // subj
        case 0x73766365: .service   // svce
        case 0x73796E63: .synchronizable   // sync
        case 0x74797065: .type   // type
        case 0x756E7770: .canUnwrap   // unwp
        case 0x76726679: .canVerify   // vrfy
        case 0x77726170: .canWrap   // wrap
        default: nil
        }
    }

    private static let byCode: [String: AttributeName] = Dictionary(all.map { ($0.code, $0) }, uniquingKeysWith: { a, _ in a })
    private static let byName: [String: AttributeName] = {
        var d = Dictionary((all + [.keyType]).map { ($0.name.lowercased(), $0) }, uniquingKeysWith: { a, _ in a })
        d["keytype"] = .type
        return d
    }()
}
