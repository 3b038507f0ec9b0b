"""Shared by the tests and the doctests: temporary files go under pytest's own temporary folder
(which pytest prunes), never loose in the system's, subprocesses included."""

import tempfile

import pytest


@pytest.fixture(scope="session", autouse=True)
def _temporary_files_under_pytest(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tempfile")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tempfile, "tempdir", str(folder))
        mp.setenv("TMPDIR", str(folder))
        yield folder
