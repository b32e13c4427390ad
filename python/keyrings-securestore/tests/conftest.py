import os
import tempfile

import pytest


@pytest.fixture(autouse=True, scope="session")
def scratch_store():
    """Every test on a scratch store of its own unless SECURESTORE_PYTEST_SELECTED_STORE=1: a SQLite file in a
    temporary folder, or the backend SECURESTORE_PYTEST_BACKEND names (secret-service under scripts/with-keyring.sh)."""
    if os.environ.get("SECURESTORE_PYTEST_SELECTED_STORE") == "1":
        yield
        return
    with tempfile.TemporaryDirectory(prefix="keyrings-securestore-") as d:
        saved = {k: os.environ.get(k) for k in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "SECURESTORE_CONFIG", "SECURESTORE_BACKEND")}
        os.environ["XDG_DATA_HOME"] = os.path.join(d, "data")
        os.environ["XDG_CONFIG_HOME"] = os.path.join(d, "config")
        os.environ.pop("SECURESTORE_CONFIG", None)
        os.environ.pop("SECURESTORE_BACKEND", None)
        if os.environ.get("SECURESTORE_PYTEST_BACKEND"):
            os.environ["SECURESTORE_BACKEND"] = os.environ["SECURESTORE_PYTEST_BACKEND"]
        yield
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
