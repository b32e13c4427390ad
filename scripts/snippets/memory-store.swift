// For fragments that use `store` and `secret`: an in-memory store holding the passwords they look up.
let store = try InMemoryStore()
let secret = Data("s3cr3t".utf8)
try store.setPassword(Data("token".utf8), service: "api", account: "deploy")
try store.setPassword(Data("token".utf8), service: "com.example.api", account: "deploy")
