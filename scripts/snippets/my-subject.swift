// The conformance subject `mine` of "Implementing a backend" (after the prelude my-backend).
let mine = ConformanceSubject(name: "my-backend") { groups in
    try Keychain(backend: MyBackend.fresh(), configuration: StoreConfiguration(accessGroups: groups))
}
