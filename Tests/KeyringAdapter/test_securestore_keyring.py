"""Python keyring's own backend test suite, run against the securestore tool through the adapter."""
from keyring.testing.backend import BackendBasicTests

from securestore_keyring import SecureStoreKeyring


class TestSecureStoreKeyring(BackendBasicTests):
    def init_keyring(self):
        return SecureStoreKeyring()
