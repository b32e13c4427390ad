import Foundation
import Glibc

/// Monotonic time in nanoseconds (`clock_gettime(CLOCK_MONOTONIC)`).
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Summary of single-operation timings.
struct Summary {
    let samples: Int
    let medianMicros: Double
    let p99Micros: Double
    /// Operations per second over the summed time of the timed operations.
    let opsPerSecond: Double

    init(nanoseconds: [UInt64]) {
        let sorted = nanoseconds.sorted()
        samples = sorted.count
        guard !sorted.isEmpty else {
            medianMicros = 0; p99Micros = 0; opsPerSecond = 0
            return
        }
        let mid = sorted.count / 2
        let median = sorted.count % 2 == 1 ? Double(sorted[mid]) : (Double(sorted[mid - 1]) + Double(sorted[mid])) / 2
        let p99Index = min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)
        medianMicros = median / 1_000
        p99Micros = Double(sorted[max(0, p99Index)]) / 1_000
        let total = sorted.reduce(0.0) { $0 + Double($1) }
        opsPerSecond = total > 0 ? Double(sorted.count) * 1e9 / total : 0
    }
}

/// glibc's `malloc_trim` (declared in <malloc.h>, which the Glibc module does not import).
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32

/// Resident memory from /proc/self/status, and a reset of its peak (Linux ≥ 4.0: `echo 5 > clear_refs`).
enum ResidentMemory {
    /// `VmHWM` (peak) and `VmRSS` (current) in bytes.
    static func current() -> (peak: Int, resident: Int) {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else {
            return (maxrss(), 0)
        }
        var peak = 0, resident = 0
        for line in status.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, let kib = Int(fields[1]) else { continue }
            if fields[0] == "VmHWM:" { peak = kib * 1024 }
            if fields[0] == "VmRSS:" { resident = kib * 1024 }
        }
        return (peak == 0 ? maxrss() : peak, resident)
    }

    /// Gives freed heap memory back to the system (`malloc_trim`), so the next case's RSS starts low.
    static func trim() {
        _ = glibcMallocTrim(0)
    }

    /// Resets the peak to the current resident size; false when the kernel refuses (the peak is then the
    /// process's peak so far).
    static func resetPeak() -> Bool {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return write(fd, "5", 1) == 1
    }

    private static func maxrss() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(truncatingIfNeeded: RUSAGE_SELF.rawValue), &usage)
        return usage.ru_maxrss * 1024
    }
}

/// What the numbers were measured on.
struct MachineInfo: Codable {
    let uname: String
    let cpuModel: String
    let cores: Int
    let swiftBuild: String
    /// /proc/loadavg when the run started (other work on the machine skews the figures).
    let loadAverage: String

    static func collect() -> MachineInfo {
        var cpu = "unknown"
        if let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
           let line = info.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
           let colon = line.firstIndex(of: ":") {
            cpu = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        #if DEBUG
        let build = "debug"
        #else
        let build = "release"
        #endif
        return MachineInfo(uname: unameAll(), cpuModel: cpu, cores: ProcessInfo.processInfo.activeProcessorCount,
                           swiftBuild: build,
                           loadAverage: ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "")
                               .trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// `uname -a`, else the fields of uname(2).
    private static func unameAll() -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/uname")
        process.arguments = ["-a"]
        let pipe = Pipe()
        process.standardOutput = pipe
        if (try? process.run()) != nil {
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if !text.isEmpty { return text }
        }
        var name = utsname()
        Glibc.uname(&name)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
        }
        return [field(name.sysname), field(name.nodename), field(name.release), field(name.version),
                field(name.machine)].joined(separator: " ")
    }
}

/// Progress on stderr: one rewritten line on a terminal, plain lines otherwise.
struct Progress {
    private let terminal = isatty(2) == 1
    private let start = monotonicNanoseconds()

    func say(_ text: String) {
        let elapsed = Double(monotonicNanoseconds() - start) / 1e9
        let line = String(format: "[%6.1fs] ", elapsed) + text
        FileHandle.standardError.write(Data((terminal ? "\r\u{1B}[K" + line : line + "\n").utf8))
    }

    func finish() {
        if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}

/// This process's write counters (`/proc/self/io`): bytes handed to write calls and how many calls. Read
/// around each timed phase, they show how much a target writes per operation (WAL frames for SQLite).
enum WriteCounters {
    static func read() -> (bytes: Int, calls: Int)? {
        guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return nil }
        var bytes: Int? = nil, calls: Int? = nil
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":")
            guard parts.count == 2, let value = Int(parts[1].trimmingCharacters(in: .whitespaces)) else { continue }
            if parts[0] == "wchar" { bytes = value }
            if parts[0] == "syscw" { calls = value }
        }
        guard let bytes, let calls else { return nil }
        return (bytes, calls)
    }
}
