package import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Key material that arrives as text (a passphrase or password in an environment variable, or typed at a
/// prompt): its bytes exactly as given, and only when they are valid UTF-8.
///
/// Foundation decodes the environment leniently: bytes that are not UTF-8 become U+FFFD, so
/// `pass\xff\xfeword`, `pass\xfe\xffword` and the text `pass��word` would all give the same passphrase and open
/// the same store. A passphrase source is therefore read as raw bytes and refused (`param`, the tool's exit 2)
/// when they are not UTF-8, as the tool already refuses a command-line argument that is not. The one check
/// for every passphrase source: `passphraseEnv`, `passwordEnv`, `SECURESTORE_EXPORT_PASSPHRASE`,
/// `rekey --new-passphrase-env` and the terminal prompt.
package enum SecretText {
    /// `bytes` when they are valid UTF-8; otherwise `param` naming `source` (never the bytes).
    package static func strict(_ bytes: Data, source: String) throws(SecureStoreError) -> Data {
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw .param(source, "\(source) is not valid UTF-8 text; a passphrase must be UTF-8 (other bytes would be "
                + "replaced, and different passphrases would open the same store). Give it as UTF-8 text.")
        }
        return bytes
    }

    /// The value of the environment variable `name` as bytes (nil when it is unset or empty), checked by
    /// ``strict(_:source:)``.
    ///
    /// `environment` is the environment the caller works with (the process's, or one a test gives). When it is
    /// the process's own (its value is what the raw variable decodes to), the raw bytes are what count.
    package static func environment(_ name: String, in environment: [String: String]) throws(SecureStoreError) -> Data? {
        guard let value = environment[name], !value.isEmpty else { return nil }
        guard let pointer = getenv(name) else { return Data(value.utf8) }
        let raw = Data(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)))
        guard String(decoding: raw, as: UTF8.self) == value else { return Data(value.utf8) }   // not the process's
        return try strict(raw, source: "The environment variable \(name)")
    }
}
