/// The one error type of SecureStore.
///
/// Every failure carries a ``Code`` (with Apple's matching `errSec…` status), a message a person can act
/// on, and, for malformed input, the name of the offending parameter. Messages never contain secret
/// values, only attribute names and public facts.
public struct SecureStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A category of failure. New codes can be added without breaking anybody's `switch`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A stable, readable name (`"duplicateItem"`).
        public let name: String
        /// Apple's `OSStatus` value for this failure (`errSecDuplicateItem` is -25299).
        public let status: Int32

        public init(name: String, status: Int32) {
            self.name = name
            self.status = status
        }

        public var description: String { "\(name) (\(status))" }

        public static let unimplemented = Code(name: "unimplemented", status: -4)
        public static let io = Code(name: "io", status: -36)
        public static let param = Code(name: "param", status: -50)
        public static let allocate = Code(name: "allocate", status: -108)
        public static let notAvailable = Code(name: "notAvailable", status: -25291)
        public static let readOnly = Code(name: "readOnly", status: -25292)
        public static let authFailed = Code(name: "authFailed", status: -25293)
        public static let duplicateItem = Code(name: "duplicateItem", status: -25299)
        public static let itemNotFound = Code(name: "itemNotFound", status: -25300)
        public static let noSuchAttribute = Code(name: "noSuchAttribute", status: -25303)
        public static let noSuchClass = Code(name: "noSuchClass", status: -25306)
        public static let interactionNotAllowed = Code(name: "interactionNotAllowed", status: -25308)
        public static let decode = Code(name: "decode", status: -26275)
        public static let missingEntitlement = Code(name: "missingEntitlement", status: -34018)
        public static let internalError = Code(name: "internal", status: -26276)
        /// A write whose outcome is unknown: it may have been committed (a PostgreSQL primary committed it, but
        /// its synchronous standby did not confirm it within the deadline, or the connection broke during
        /// COMMIT). Check before retrying. Apple has no such status; -26277 is SecureStore's own, next to
        /// `errSecInternalError`.
        public static let outcomeUnknown = Code(name: "outcomeUnknown", status: -26277)

        /// Every code this library produces.
        public static let all: [Code] = [
            .unimplemented, .io, .param, .allocate, .notAvailable, .readOnly, .authFailed, .duplicateItem,
            .itemNotFound, .noSuchAttribute, .noSuchClass, .interactionNotAllowed, .decode, .missingEntitlement,
            .internalError, .outcomeUnknown,
        ]

        /// The code for an `OSStatus`, if it is one of ours.
        public init?(status: Int32) {
            guard let code = Code.all.first(where: { $0.status == status }) else { return nil }
            self = code
        }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What happened and what to do about it.
    public var message: String
    /// The query key or attribute that was wrong, for ``Code/param``, ``Code/noSuchAttribute`` and similar.
    public var parameter: String?

    /// Apple's `OSStatus` for this error.
    public var status: Int32 { code.status }

    public init(_ code: Code, _ message: String, parameter: String? = nil) {
        self.code = code
        self.message = message
        self.parameter = parameter
    }

    public var description: String { "\(code.name) (\(code.status)): \(message)" }

    // Convenience constructors used across the core and the backends.

    public static func param(_ parameter: String, _ message: String) -> SecureStoreError {
        SecureStoreError(.param, message, parameter: parameter)
    }

    public static func notFound(_ message: String = "No item matches the query.") -> SecureStoreError {
        SecureStoreError(.itemNotFound, message)
    }
}
