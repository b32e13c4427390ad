/// How the tool prints text that came from outside (attribute values, arguments in messages): in double
/// quotes, `"` and `\` escaped with a backslash, newline, carriage return and tab as `\n` `\r` `\t`, and every
/// other control character (C0, DEL, C1, U+2028, U+2029) as `\uXXXX`. Such a value stays on its line and
/// cannot end its quotes early, so one item is one line of `find`'s output.
public enum TextEscaping {
    /// `text` escaped, without the surrounding quotes.
    public static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if isControl(scalar) {
                    out += hex(scalar)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// `text` with only its control characters escaped (as `\uXXXX`; quotes and backslashes kept): for a
    /// message on standard error that may hold a value from a store or a file, so it cannot move the cursor,
    /// recolour the terminal or fake a second line.
    public static func controlsEscaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) { out += hex(scalar) } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        return v < 0x20 || (0x7F...0x9F).contains(v) || v == 0x2028 || v == 0x2029
    }

    static func hex(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// `"escaped text"`.
    public static func quoted(_ text: String) -> String { "\"" + escaped(text) + "\"" }

    /// Reverses ``escaped(_:)`` (for tests and scripts that read `find`'s output); nil for malformed text.
    public static func unescaped(_ text: String) -> String? {
        var out = String.UnicodeScalarView()
        var it = text.unicodeScalars.makeIterator()
        while let c = it.next() {
            guard c == "\\" else {
                if c == "\"" || c.value < 0x20 { return nil }
                out.append(c)
                continue
            }
            switch it.next() {
            case "\""?: out.append("\"")
            case "\\"?: out.append("\\")
            case "n"?: out.append("\n")
            case "r"?: out.append("\r")
            case "t"?: out.append("\t")
            case "u"?:
                var hex = ""
                for _ in 0..<4 { guard let h = it.next() else { return nil }; hex.unicodeScalars.append(h) }
                guard let v = UInt32(hex, radix: 16), let s = Unicode.Scalar(v) else { return nil }
                out.append(s)
            default: return nil
            }
        }
        return String(out)
    }
}
