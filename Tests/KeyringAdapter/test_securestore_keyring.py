"""Python keyring's own backend test suite against the securestore tool ($SECURESTORE_TOOL), through the keyring
backend this repository ships (python/keyrings-securestore), loaded from the source tree: the Swift suite runs
the same backend users install with pip, with Debian's python3-keyring and no PyPI
(scripts/python-check.sh tests the pip-installed copy)."""
import importlib.util
import os
import sys

from keyring.testing.backend import BackendBasicTests

_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "keyrings-securestore",
                     "keyrings", "securestore.py")
_spec = importlib.util.spec_from_file_location("keyrings_securestore_from_source", _path)
_module = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _module
_spec.loader.exec_module(_module)
SecureStoreKeyring = _module.SecureStoreKeyring


class TestSecureStoreKeyring(BackendBasicTests):
    def init_keyring(self):
        return SecureStoreKeyring()
