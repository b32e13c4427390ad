/// A registry server URL normalised as docker-credential-helpers' `registryurl.Parse` does (Go's
/// `net/url` underneath): a URL without `://` is read as `//host…`; the scheme must be `http`, `https` or
/// absent (then https); the hostname must not be empty; the query and fragment are dropped; the path is
/// percent-decoded. `localhost:5000`, `//localhost:5000` and `https://localhost:5000` are one registry;
/// `http://…` is another, and so is a different path (`…/v1/` is not `…`).
///
/// Stricter than Go where Go would keep something surprising: a user name or password in the URL is refused
/// (it would be stored in the clear as part of the URL), and a port must be 1…65535.
public struct RegistryURL: Sendable, Equatable {
    /// `https` or `http` (https when the URL gave none).
    public var scheme: String
    public var hostname: String
    /// 0 when the URL names no port.
    public var port: Int
    /// The decoded path, "" when none.
    public var path: String

    public init(scheme: String, hostname: String, port: Int, path: String) {
        self.scheme = scheme
        self.hostname = hostname
        self.port = port
        self.path = path
    }

    /// - Throws: with docker's own wording where it has one (`no hostname in URL`, `unsupported scheme: ftp`).
    public init(parsing text: String) throws(CredentialHelperError) {
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw CredentialHelperError("invalid control character in URL")
        }
        var rest = Substring(text)
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        if let question = rest.firstIndex(of: "?") { rest = rest[..<question] }
        var scheme = "https"
        if !text.contains("://") && !text.hasPrefix("//") {
            rest = "//" + rest
        } else if let colon = rest.firstIndex(of: ":"), Self.isScheme(rest[..<colon]) {
            let given = rest[..<colon].lowercased()
            guard given == "https" || given == "http" else { throw CredentialHelperError("unsupported scheme: \(given)") }
            scheme = given
            rest = rest[rest.index(after: colon)...]
        }
        guard rest.hasPrefix("//") else { throw CredentialHelperError("no hostname in URL") }
        rest = rest.dropFirst(2)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        guard !authority.contains("@") else {
            throw CredentialHelperError("the server URL must not contain a user name or password; give them as Username and Secret.")
        }
        var host = authority
        var portText: Substring = ""
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw CredentialHelperError("missing ']' in host") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { throw CredentialHelperError("invalid port after host") }
                portText = after.dropFirst()
            }
            guard host.unicodeScalars.allSatisfy({ $0.properties.isASCIIHexDigit || ":.%".unicodeScalars.contains($0) }) else {
                throw CredentialHelperError("invalid IPv6 address in host")
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        if !portText.isEmpty {
            guard portText.utf8.count <= 5, portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let p = Int(portText), (1...65535).contains(p) else {
                throw CredentialHelperError("invalid port in URL; it must be a number from 1 to 65535")
            }
            port = p
        } else {
            port = 0
        }
        guard !host.isEmpty else { throw CredentialHelperError("no hostname in URL") }
        if !authority.hasPrefix("[") {
            guard host.unicodeScalars.allSatisfy({ $0.value > 0x7f || $0.properties.isAlphabetic && $0.isASCII
                                                   || ("0"..."9").contains($0) || "-._~".unicodeScalars.contains($0) }) else {
                throw CredentialHelperError("invalid character in host name")
            }
        }
        hostname = String(host)
        path = try Self.percentDecoded(rest[slash...])
        self.scheme = scheme
    }

    /// Go's `getScheme`: a letter, then letters, digits, `+`, `-`, `.`.
    private static func isScheme(_ s: Substring) -> Bool {
        guard let first = s.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic else { return false }
        return s.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "+-.".contains(Character($0))) }
    }

    private static func percentDecoded(_ s: Substring) throws(CredentialHelperError) -> String {
        guard s.contains("%") else { return String(s) }
        var bytes: [UInt8] = []
        var utf8 = s.utf8[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let hi = utf8.popFirst().flatMap(hexValue), let lo = utf8.popFirst().flatMap(hexValue) else {
                throw CredentialHelperError("invalid URL escape in path")
            }
            bytes.append(hi << 4 | lo)
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw CredentialHelperError("the path of the URL is not UTF-8 once decoded")
        }
        return decoded
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The URL written back (`https://host:port/path`), for items that carry no original spelling.
    public var text: String {
        let host = hostname.contains(":") ? "[\(hostname)]" : hostname
        return "\(scheme)://\(host)\(port == 0 ? "" : ":\(port)")\(path)"
    }
}
