// libFuzzer harness for SecItemExercise (see Fuzz/README.md: why it defines both LLVMFuzzerTestOneInput and a main that calls LLVMFuzzerRunDriver).
// Built with -DSECURESTORE_LIBFUZZER by scripts/fuzz.sh; a plain build makes a replay tool instead.
import Glibc
import SecureStoreFuzzing

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    FuzzHarness.exercise(SecItemExercise.run, UnsafeBufferPointer(start: data, count: size))
    return 0
}

#if SECURESTORE_LIBFUZZER
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

@main struct FuzzMain {
    static func main() {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOne(data, size) })
    }
}
#else
@main struct ReplayMain {
    static func main() {
        exit(FuzzHarness.replay(SecItemExercise.run, arguments: Array(CommandLine.arguments.dropFirst())))
    }
}
#endif
