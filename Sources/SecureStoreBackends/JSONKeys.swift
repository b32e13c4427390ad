import Foundation

/// Finds a key given twice in one JSON object, which `JSONSerialization` accepts silently (the last one
/// wins). Runs on text the JSON parser has already accepted, so it only follows the structure; keys are
/// compared after their escapes are decoded (`"backend"` and `"backen\u0064"` are one key).
enum JSONKeys {
    /// The first duplicate key, as `outer.inner` (nil when there is none).
    static func firstDuplicate(in data: Data) -> String? {
        var scanner = Scanner(bytes: Array(data))
        return scanner.value(path: "", depth: 0)
    }

    private struct Scanner {
        let bytes: [UInt8]
        var at = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func skipSpace() {
            while at < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[at]) { at += 1 }
        }

        /// Scans one value; the first duplicate key found in it.
        mutating func value(path: String, depth: Int) -> String? {
            skipSpace()
            guard at < bytes.count, depth < 512 else { return nil }
            switch bytes[at] {
            case UInt8(ascii: "{"):
                at += 1
                var keys = Set<String>()
                while true {
                    skipSpace()
                    guard at < bytes.count else { return nil }
                    if bytes[at] == UInt8(ascii: "}") { at += 1; return nil }
                    if bytes[at] == UInt8(ascii: ",") { at += 1; continue }
                    guard bytes[at] == UInt8(ascii: "\"") else { return nil }
                    let key = string()
                    let named = path.isEmpty ? key : path + "." + key
                    if !keys.insert(key).inserted { return named }
                    skipSpace()
                    guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { return nil }
                    at += 1
                    if let found = value(path: named, depth: depth + 1) { return found }
                }
            case UInt8(ascii: "["):
                at += 1
                while true {
                    skipSpace()
                    guard at < bytes.count else { return nil }
                    if bytes[at] == UInt8(ascii: "]") { at += 1; return nil }
                    if bytes[at] == UInt8(ascii: ",") { at += 1; continue }
                    if let found = value(path: path, depth: depth + 1) { return found }
                }
            case UInt8(ascii: "\""):
                _ = string()
                return nil
            default:   // a number, true, false or null
                while at < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D]
                    .contains(bytes[at]) { at += 1 }
                return nil
            }
        }

        /// Scans a string starting at its opening quote; its decoded text.
        mutating func string() -> String {
            at += 1
            var out: [UInt8] = []
            var pendingHigh: UInt32?
            func append(_ scalar: UInt32) {
                if let s = Unicode.Scalar(scalar) { out += Array(String(Character(s)).utf8) } else { out += [0xEF, 0xBF, 0xBD] }
            }
            while at < bytes.count, bytes[at] != UInt8(ascii: "\"") {
                if bytes[at] == UInt8(ascii: "\\"), at + 1 < bytes.count {
                    let escape = bytes[at + 1]
                    at += 2
                    if escape == UInt8(ascii: "u"), at + 4 <= bytes.count,
                       let unit = UInt32(String(decoding: bytes[at..<at + 4], as: UTF8.self), radix: 16) {
                        at += 4
                        if (0xD800...0xDBFF).contains(unit) { pendingHigh = unit; continue }
                        if (0xDC00...0xDFFF).contains(unit), let high = pendingHigh {
                            append(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00))
                        } else {
                            append(unit)
                        }
                        pendingHigh = nil
                        continue
                    }
                    pendingHigh = nil
                    switch escape {
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    default: out.append(escape)   // \" \\ \/
                    }
                    continue
                }
                pendingHigh = nil
                out.append(bytes[at])
                at += 1
            }
            at += 1   // the closing quote
            return String(decoding: out, as: UTF8.self)
        }
    }
}
