"""Where the Python tests find the repository and the built mha-tune: one place instead of a
copy per test. ctest sets MHA_BUILD_DIR; run by hand, the tests use scripts/test.sh's build-ci/."""
import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD_DIR = os.path.abspath(os.environ.get("MHA_BUILD_DIR", os.path.join(REPO, "build-ci")))
MHA_TUNE = os.path.join(BUILD_DIR, "mha-tune")


def has_mha_tune():
    return os.access(MHA_TUNE, os.X_OK)
