import Foundation

// securestore-bench: times every backend against its limits; see Benchmarks/README.md.

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments == ["--postgres-concurrency"] {   // the PostgreSQL pool's throughput rows only (PostgresBench.swift)
    do { print(try PostgresConcurrencyBench.run(), terminator: "") } catch {
        FileHandle.standardError.write(Data("securestore-bench: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}
if arguments.first == "--concurrency" {   // concurrent callers, async API against threads (ConcurrencyBench.swift)
    do { print(try ConcurrencyBench.run(Array(arguments.dropFirst())), terminator: "") } catch {
        FileHandle.standardError.write(Data("securestore-bench: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}
if arguments == ["--hand-off"] {   // what one async call's hand-off to a store thread costs (HandOffBench.swift)
    do { print(try HandOffBench.run(), terminator: "") } catch {
        FileHandle.standardError.write(Data("securestore-bench: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}
let options: Options
do {
    options = try Options.parse(arguments)
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(2)
}

let entries = BackendEntry.all.filter { options.backends.isEmpty || options.backends.contains($0.name) }
guard !entries.isEmpty else {
    FileHandle.standardError.write(Data("No backend named \(options.backends); have \(BackendEntry.all.map(\.name)).\n".utf8))
    exit(2)
}

let machine = MachineInfo.collect()
let started = monotonicNanoseconds()
let runner: Runner
do {
    runner = try Runner(options: options)
    try runner.run(entries)
} catch {
    FileHandle.standardError.write(Data("\nsecurestore-bench failed: \(error)\n".utf8))
    Runner.removeScratchOfFailedRun()
    exit(1)
}
var peers: PeerResults? = nil
if options.peers {
    var results = Peers.run(options: options, folder: runner.root, progress: runner.progress)
    runner.progress.finish()
    Peers.compare(&results, with: runner.measurements)
    peers = results
}
runner.removeScratch()
let duration = Double(monotonicNanoseconds() - started) / 1e9

let verdicts = Report.evaluate(entries, runner.measurements, failures: runner.failures, peers: peers)
let command = (["securestore-bench"] + arguments).joined(separator: " ")
let markdown = Report.markdown(runner.measurements, runner.cases, verdicts, failures: runner.failures, peers: peers,
                               machine: machine, command: command)
    + String(format: "\nTotal time %.0f s.\n", duration)
print(markdown)

do {
    if let path = options.markdownPath {
        try markdown.write(toFile: path, atomically: true, encoding: .utf8)
    }
    if let path = options.jsonPath {
        let results = Results(machine: machine, date: ISO8601DateFormatter().string(from: Date()), quick: options.quick,
                              counts: options.counts, secretServiceCounts: options.secretServiceCounts,
                              secretSizes: options.secretSizes,
                              samples: ["lookup": options.lookupSamples, "list": options.listSamples,
                                        "update": options.writeSamples, "delete": options.writeSamples],
                              durationSeconds: duration, measurements: runner.measurements, cases: runner.cases,
                              goals: verdicts, failures: runner.failures + (peers?.failures ?? []), peers: peers)
        try Report.json(results).write(to: URL(fileURLWithPath: path))
    }
    if let path = options.chartPath {
        try Chart.svg(runner.measurements, sizes: options.secretSizes).write(toFile: path, atomically: true, encoding: .utf8)
    }
} catch {
    FileHandle.standardError.write(Data("securestore-bench could not write its output: \(error)\n".utf8))
    exit(1)
}
// Some rows could not be measured (e.g. no session bus for the Secret Service): everything above was still
// written, and the status says the run is partial.
let partial = !runner.failures.isEmpty || !(peers?.failures.isEmpty ?? true)
if partial {
    FileHandle.standardError.write(Data("securestore-bench: some rows were not measured (see \"Not measured\"); exit status 3.\n".utf8))
    exit(3)
}
