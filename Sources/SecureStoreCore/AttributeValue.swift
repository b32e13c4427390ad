public import Foundation

/// A value of an attribute. Text attributes keep the type they were given (`String` or `Data`); numbers
/// and flags are normalized to `.number` and `.bool`.
public enum AttributeValue: Sendable, Hashable, CustomStringConvertible {
    case string(String)
    case data(Data)
    case number(Int64)
    case bool(Bool)
    case date(Date)

    public var description: String {
        switch self {
        case .string(let s): "\"\(s)\""
        case .data(let d): "<\(d.count) bytes>"
        case .number(let n): String(n)
        case .bool(let b): String(b)
        case .date(let d): d.formatted(.iso8601)
        }
    }

    /// The UTF-8 bytes of a text or data value.
    public var bytes: [UInt8]? {
        switch self {
        case .string(let s): Array(s.utf8)
        case .data(let d): Array(d)
        default: nil
        }
    }

    /// The integer reading of a number or flag.
    public var integer: Int64? {
        switch self {
        case .number(let n): n
        case .bool(let b): b ? 1 : 0
        default: nil
        }
    }

    /// The value as text, when it is text (or UTF-8 data).
    public var text: String? {
        switch self {
        case .string(let s): s
        case .data(let d): String(data: d, encoding: .utf8)
        default: nil
        }
    }
}

// Literals and interpolations: `[.service: "app", .account: "user-\(id)", .port: 443, .synchronizable: true]`.
extension AttributeValue: ExpressibleByStringInterpolation, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

/// A Swift value that stands for an attribute's value, so the typed API takes variables as it takes literals:
/// `ItemQuery(.genericPassword, [.service: "app", .account: username, .synchronizable: synced])`. `String` and
/// `Data` are text or data, `Date` a date, `Bool` a flag, `Int`, `Int32` and `Int64` numbers, and
/// ``AttributeValue`` itself. The attribute still checks the value's kind (``AttributeName/normalize(_:)``).
public protocol AttributeValueConvertible: Sendable {
    /// The attribute value this value stands for.
    var attributeValue: AttributeValue { get }
}

extension AttributeValue: AttributeValueConvertible {
    public var attributeValue: AttributeValue { self }
}

extension String: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .string(self) }
}

extension Data: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .data(self) }
}

extension Date: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .date(self) }
}

extension Bool: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .bool(self) }
}

extension Int: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .number(Int64(self)) }
}

extension Int32: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .number(Int64(self)) }
}

extension Int64: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .number(self) }
}

extension Dictionary where Key == AttributeName, Value == any AttributeValueConvertible {
    /// The attribute values the Swift values stand for.
    var attributeValues: [AttributeName: AttributeValue] { mapValues(\.attributeValue) }
}

extension AttributeName {
    /// Checks `value` against this attribute's kind and returns its normalized form.
    ///
    /// - Throws: ``SecureStoreError/Code/param`` naming this attribute when the value has the wrong type.
    public func normalize(_ value: AttributeValue) throws(SecureStoreError) -> AttributeValue {
        switch (kind, value) {
        case (.text, .string), (.text, .data), (.data, .string), (.data, .data):
            if self == .accessible {
                guard let text = value.text, Accessibility(rawValue: text) != nil else {
                    throw .param(code, "\(name) must be one of \(Accessibility.allCases.map(\.rawValue)).")
                }
                return .string(text)
            }
            return value
        case (.date, .date(let d)):
            // NaN is no point in time: it never equals itself, so such an item could never be found again.
            guard !d.timeIntervalSinceReferenceDate.isNaN else {
                throw .param(code, "\(name) must be a real date; got NaN.")
            }
            return value
        case (.number, .number), (.bool, .bool), (.numberOrText, .number), (.textOrNumber, .number),
             (.textOrNumber, .string), (.textOrNumber, .data):
            return value
        case (.numberOrText, .bool(let b)), (.textOrNumber, .bool(let b)):
            // A boolean is the number 0 or 1: through Foundation's bridging `NSNumber(0)` and `false` are
            // the same value, so a numeric 0 or 1 may arrive as either.
            return .number(b ? 1 : 0)
        case (.numberOrText, .string(let s)):
            // Apple's number conversion: a string whose integer reading prints back as the same string is
            // that number; any other string is kept as text.
            if let n = Int32(s), String(n) == s { return .number(Int64(n)) }
            return value
        case (.number, .bool(let b)):
            return .number(b ? 1 : 0)
        case (.number, .string(let s)):
            guard let n = Int64(s.trimmingCharacters(in: .whitespaces)) else {
                throw .param(code, "\(name) must be a number; got a string that is not one.")
            }
            return .number(n)
        case (.bool, .number(let n)):
            return .bool(n != 0)
        case (.bool, .string(let s)):
            switch s.lowercased() {
            case "1", "true", "yes": return .bool(true)
            case "0", "false", "no": return .bool(false)
            default: throw .param(code, "\(name) must be a boolean.")
            }
        default:
            throw .param(code, "\(name) must be \(kind.expectation); got \(value.kindName).")
        }
    }

    /// The value an item has for this attribute when it was never set: empty text/data, 0, false (empty
    /// text for protocol and authentication type, which older stores hold as text).
    public var defaultValue: AttributeValue? {
        switch kind {
        case .text, .numberOrText, .textOrNumber: .string("")
        case .data: .data(Data())
        case .number: .number(0)
        case .bool: .bool(false)
        case .date: nil
        }
    }
}

extension AttributeKind {
    var expectation: String {
        switch self {
        case .text: "text (a string or data)"
        case .data: "data (or a string)"
        case .number: "a number"
        case .bool: "a boolean"
        case .date: "a date"
        case .numberOrText: "a number or a string"
        case .textOrNumber: "text (a string or data) or a number"
        }
    }
}

extension AttributeValue {
    var kindName: String {
        switch self {
        case .string: "a string"
        case .data: "data"
        case .number: "a number"
        case .bool: "a boolean"
        case .date: "a date"
        }
    }
}
