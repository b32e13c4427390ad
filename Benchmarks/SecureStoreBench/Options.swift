import Foundation

/// Command-line options of `securestore-bench`.
struct Options {
    var quick = false
    var jsonPath: String? = nil
    var chartPath: String? = nil
    var markdownPath: String? = nil
    var counts: [Int] = [1_000, 10_000, 100_000]
    /// Secret sizes in bytes.
    var secretSizes: [Int] = [32, 4096]
    /// Only these backends (by name); empty: all.
    var backends: [String] = []
    /// Item counts for the Secret Service (gnome-keyring rewrites its file on every change: N stays small).
    var secretServiceCounts: [Int] = [100, 1_000]
    /// Also measure the peers (Python keyring's SecretService backend, keyrings.cryptfile).
    var peers = false
    /// Items for keyrings.cryptfile (Argon2id on every operation, ~0.3 s each).
    var cryptfileCount = 10

    /// How many single operations are timed per (target, N, size).
    var lookupSamples: Int { quick ? 200 : 1_000 }
    var listSamples: Int { quick ? 10 : 20 }
    var writeSamples: Int { quick ? 50 : 200 }

    static let usage = """
        usage: securestore-bench [--quick] [--json FILE] [--chart FILE.svg] [--markdown FILE.md]
                                 [--counts 1000,10000,100000] [--sizes 32,4096]
                                 [--backends memory,secitem,sqlite,secitem-sqlite,secret-service,postgres] [--ss-counts 100,1000]
                                 [--peers] [--cryptfile-count 10]
          --quick      N = 1,000 (Secret Service: 20, 50; cryptfile: 5), fewer samples (under two minutes)
          --counts     N for memory and SQLite
          --ss-counts  N for the Secret Service (more with e.g. --ss-counts 100,1000,5000)
          --peers      also time Python keyring (SecretService) and keyrings.cryptfile, installed on first use
                       into .build/peers-venv from PyPI
          --cryptfile-count  N for keyrings.cryptfile (about 0.3 s per operation)
          The Secret Service rows need a session bus with an unlocked keyring: run under scripts/with-keyring.sh.
          Without one they are reported as not measured (with the reason) and the exit status is 3.
          --json       every figure, with machine info
          --chart      an SVG chart (log-log µs per operation against N)
          --markdown   the Markdown table and goal verdicts, as printed on stdout
        securestore-bench --concurrency [--only memory,sqlite,secret-service,postgres,postgres-1ms]
          1, 4 and 16 concurrent callers of one store, async tasks against threads (see Benchmarks/README.md)
        """

    enum ParseError: Error, CustomStringConvertible {
        case message(String)
        var description: String {
            switch self { case .message(let m): m }
        }
    }

    static func parse(_ arguments: [String]) throws(ParseError) -> Options {
        var options = Options()
        var explicitCounts = false
        var explicitSecretServiceCounts = false
        var explicitCryptfileCount = false
        var rest = arguments[...]
        func value(_ flag: String) throws(ParseError) -> String {
            guard let v = rest.popFirst(), !v.hasPrefix("--") else { throw .message("\(flag) needs a value.\n\(usage)") }
            return v
        }
        func integers(_ flag: String, _ text: String) throws(ParseError) -> [Int] {
            let parts = text.split(separator: ",").map { $0.replacingOccurrences(of: "_", with: "") }
            var numbers: [Int] = []
            for part in parts {
                guard let n = Int(part), n > 0 else { throw .message("\(flag): '\(part)' is not a positive integer.") }
                numbers.append(n)
            }
            guard !numbers.isEmpty else { throw .message("\(flag) needs at least one number.") }
            return numbers
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--quick": options.quick = true
            case "--json": options.jsonPath = try value(argument)
            case "--chart": options.chartPath = try value(argument)
            case "--markdown": options.markdownPath = try value(argument)
            case "--counts":
                options.counts = try integers(argument, try value(argument)).sorted()
                explicitCounts = true
            case "--ss-counts":
                options.secretServiceCounts = try integers(argument, try value(argument)).sorted()
                explicitSecretServiceCounts = true
            case "--peers": options.peers = true
            case "--cryptfile-count":
                options.cryptfileCount = try integers(argument, try value(argument))[0]
                explicitCryptfileCount = true
            case "--sizes": options.secretSizes = try integers(argument, try value(argument))
            case "--backends": options.backends = try value(argument).split(separator: ",").map(String.init)
            case "-h", "--help": throw .message(usage)
            default: throw .message("Unknown argument '\(argument)'.\n\(usage)")
            }
        }
        if options.quick && !explicitCounts { options.counts = [1_000] }
        if options.quick && !explicitSecretServiceCounts { options.secretServiceCounts = [20, 50] }
        if options.quick && !explicitCryptfileCount { options.cryptfileCount = 5 }
        return options
    }
}
