"""Published outputs stay outside the project: the tests find them beside the checkout and skip without them."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests import samples


def test_the_project_keeps_no_published_outputs():
    # copies of other people's logs and documents lived here; they are read from ../shared/samples/ instead
    assert not (samples.REPOSITORY / "tests" / "health" / "data" / "real").exists()


def test_the_shared_folder_is_found_beside_a_clone_or_a_worktree(tmp_path):
    (tmp_path / "shared" / "samples").mkdir(parents=True)
    assert samples.samples_root(tmp_path / "main") == tmp_path / "shared" / "samples"  # CI and /work/main
    assert samples.samples_root(tmp_path / "wt" / "name") == tmp_path / "shared" / "samples"  # a worktree


def test_a_clone_without_the_shared_folder_skips_saying_why(tmp_path, monkeypatch):
    assert samples.samples_root(tmp_path / "lonely" / "clone") is None
    monkeypatch.setattr(samples, "ROOT", None)
    with pytest.raises(pytest.skip.Exception, match="shared/samples"):
        samples.text("nccl_awsome_p5_2node_srun.txt")
    assert samples.glob("dcgm_*.txt") == []


def test_every_set_is_found_here():
    for name in ("fixtures", "real", "real2", "real3"):
        assert (samples.folder(name) / "SOURCES.md").is_file(), name
    assert isinstance(samples.ROOT, Path)
