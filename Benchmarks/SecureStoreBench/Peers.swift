import Foundation

/// One peer operation's figures and our speed-up over it.
struct PeerMeasurement: Codable {
    let peer: String
    let n: Int
    let secretBytes: Int
    /// The peer's operation: set (new item), get, delete.
    let op: String
    let samples: Int
    let medianMicros: Double
    let p99Micros: Double
    let opsPerSecond: Double
    /// Our row it is compared with (backend, N, op).
    var ours: String? = nil
    var oursMedianMicros: Double? = nil
    /// Peer median / our median.
    var speedUp: Double? = nil
}

/// What `--peers` produced.
struct PeerResults: Codable {
    var versions: [String: String] = [:]
    var measurements: [PeerMeasurement] = []
    var failures: [Failure] = []
}

/// The peers: Python `keyring` (SecretService backend, same daemon) and `keyrings.cryptfile`, timed by
/// `Benchmarks/peers/peers.py` in a private virtual environment (`.build/peers-venv`, made on first use).
enum Peers {
    /// The package root: from this source file's place, else the current folder.
    static var packageRoot: String {
        let fromSource = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        if FileManager.default.fileExists(atPath: fromSource + "/Benchmarks/peers/peers.py") { return fromSource }
        return FileManager.default.currentDirectoryPath
    }

    static func run(options: Options, folder: String, progress: Progress) -> PeerResults {
        var results = PeerResults()
        let root = packageRoot
        let script = root + "/Benchmarks/peers/peers.py"
        let venv = root + "/.build/peers-venv"
        let python = venv + "/bin/python"
        let log = folder + "/peers.log"
        func fail(_ reason: String) -> PeerResults {
            var text = reason
            if let tail = try? String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").suffix(5)
                .joined(separator: " | "), !tail.isEmpty {
                text += " (log: \(tail))"
            }
            results.failures.append(Failure(backend: "peers", reason: text))
            FileHandle.standardError.write(Data("securestore-bench: peers not measured: \(text)\n".utf8))
            return results
        }
        guard FileManager.default.fileExists(atPath: script) else { return fail("\(script) not found") }

        // The virtual environment, with keyring, secretstorage and keyrings.cryptfile from PyPI.
        let check = ["-c", "import keyring, secretstorage, keyrings.cryptfile"]
        if !FileManager.default.fileExists(atPath: python) || spawn(python, check, output: log) != 0 {
            progress.say("peers: creating \(venv) (python3 -m venv; pip install keyring secretstorage keyrings.cryptfile)")
            guard spawn("/usr/bin/env", ["python3", "-m", "venv", venv], output: log) == 0 else {
                return fail("python3 -m venv \(venv) failed")
            }
            guard spawn(python, ["-m", "pip", "install", "--quiet", "keyring", "secretstorage", "keyrings.cryptfile"],
                        output: log) == 0 else {
                return fail("pip install keyring secretstorage keyrings.cryptfile failed")
            }
        }

        progress.say("peers: Python keyring (SecretService) N=\(options.secretServiceCounts), keyrings.cryptfile N=\(options.cryptfileCount)")
        let out = folder + "/peers.json"
        let status = spawn(python, [script, "--out", out,
                                    "--ss-counts", options.secretServiceCounts.map(String.init).joined(separator: ","),
                                    "--cryptfile-count", String(options.cryptfileCount),
                                    "--get-samples", String(options.writeSamples * 4),
                                    "--write-samples", String(options.writeSamples), "--progress"], output: log)
        guard status == 0 else { return fail("peers.py exited with status \(status)") }
        guard let data = FileManager.default.contents(atPath: out) else { return fail("peers.py wrote no \(out)") }
        struct Output: Decodable {
            struct Figures: Decodable {
                let samples: Int
                let medianMicros: Double
                let p99Micros: Double
                let opsPerSecond: Double
            }
            struct Result: Decodable {
                let peer: String
                let n: Int
                let secretBytes: Int
                let ops: [String: Figures]
            }
            struct Failed: Decodable {
                let peer: String
                let reason: String
            }
            let versions: [String: String]
            let results: [Result]
            let failures: [Failed]
        }
        let decoded: Output
        do {
            decoded = try JSONDecoder().decode(Output.self, from: data)
        } catch {
            return fail("peers.py output unreadable: \(error)")
        }
        results.versions = decoded.versions
        for failed in decoded.failures {
            results.failures.append(Failure(backend: failed.peer, reason: failed.reason))
            FileHandle.standardError.write(Data("securestore-bench: \(failed.peer) not measured: \(failed.reason)\n".utf8))
        }
        for result in decoded.results {
            for op in ["set", "get", "delete"] {
                guard let f = result.ops[op] else { continue }
                results.measurements.append(PeerMeasurement(peer: result.peer, n: result.n, secretBytes: result.secretBytes,
                                                            op: op, samples: f.samples, medianMicros: f.medianMicros,
                                                            p99Micros: f.p99Micros, opsPerSecond: f.opsPerSecond))
            }
        }
        return results
    }

    /// Which of our rows each peer is compared with: Python keyring's SecretService backend with our
    /// Secret Service backend at the same N; keyrings.cryptfile (an encrypted file) with our SQLite backend at
    /// its smallest N (more items than cryptfile's, which only favours cryptfile). Secrets of 32 bytes.
    static func compare(_ peers: inout PeerResults, with measurements: [Measurement]) {
        for index in peers.measurements.indices {
            let p = peers.measurements[index]
            let op: Op = switch p.op { case "set": .add; case "get": .lookup; default: .delete }
            let backend = p.peer.hasPrefix("python-keyring") ? "secret-service" : "sqlite"
            let rows = measurements.filter { $0.target == backend && !$0.isLimit && $0.op == op && $0.secretBytes == 32 }
            let ours = backend == "secret-service" ? rows.first { $0.n == p.n } : rows.min { $0.n < $1.n }
            guard let ours, ours.medianMicros > 0 else { continue }
            peers.measurements[index].ours = "\(backend) N=\(ours.n) \(op.rawValue)"
            peers.measurements[index].oursMedianMicros = ours.medianMicros
            peers.measurements[index].speedUp = p.medianMicros / ours.medianMicros
        }
    }

    /// Runs a program with stdin from /dev/null and stdout+stderr appended to `output`; its exit status
    /// (or -1 when it could not start). posix_spawn, not Foundation.Process: no inherited pipes to hang on.
    static func spawn(_ path: String, _ arguments: [String], output: String) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let rc = argv.withUnsafeBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return EINVAL }
            return posix_spawn(&pid, path, &actions, nil, base, environ)
        }
        guard rc == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return -1 }
        }
        // WIFEXITED / WEXITSTATUS by hand (macros are not imported).
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}
