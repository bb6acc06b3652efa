"""The disk boundary (issue 28 item 2; reliability review 2026-12: disk.*, ro.*, cli.*
"output path is a file"): every write goes through `kgbench.io`, which turns what the disk
refuses (ENOSPC, EROFS, ENOTDIR, EEXIST, ENAMETOOLONG, EBUSY, ...) into one message naming
the path and the cause, exit 2, with the previous files intact and no temporary file left.

ENOSPC is injected (os.fsync raising it, as a full disk does on flush); where this machine
lets the test mount a small tmpfs (root in a container), a really full disk is used too.
"""

from __future__ import annotations

import errno
import itertools
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgbench.cli import app
from kgbench.io import WriteError, atomic_write_bytes, atomic_write_files, replace_folder


def cli(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, [str(a) for a in args])
    return result.exit_code, result.output


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every flush to disk fails with ENOSPC."""

    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", no_space)


def _strays(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".tmp" in p.name or ".old-" in p.name)


def test_an_injected_enospc_is_one_message_and_the_old_file_survives(tmp_path, full_disk):
    target = tmp_path / "panel.json"
    target.write_bytes(b"old")
    with pytest.raises(WriteError) as caught:
        atomic_write_bytes(target, b"new content")
    message = str(caught.value)
    assert str(target) in message and "No space left on device (ENOSPC)" in message
    assert caught.value.exit_code == 2
    assert target.read_bytes() == b"old" and _strays(tmp_path) == []


def test_replace_folder_under_enospc_keeps_the_old_folder(tmp_path, monkeypatch):
    target = tmp_path / "cardio"
    target.mkdir()
    (target / "kg.json").write_bytes(b"old")
    real_write = Path.write_bytes

    def no_space(self: Path, data: bytes) -> int:
        if self.name == "b.json":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
        return real_write(self, data)

    monkeypatch.setattr(Path, "write_bytes", no_space)
    with pytest.raises(WriteError, match="No space left on device"):
        replace_folder(target, {"a.json": b"1", "b.json": b"2"})
    assert sorted(p.name for p in target.iterdir()) == ["kg.json"]
    assert (target / "kg.json").read_bytes() == b"old" and _strays(tmp_path) == []


def test_several_files_are_written_all_or_none(tmp_path, monkeypatch):
    (tmp_path / "nodes.tsv").write_bytes(b"old nodes")
    calls = {"n": 0}
    real_fsync = os.fsync

    def second_fails(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", second_fails)
    files = {tmp_path / "nodes.tsv": b"new nodes", tmp_path / "edges.tsv": b"new edges"}
    with pytest.raises(WriteError, match="ENOSPC"):
        atomic_write_files(files)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nodes.tsv"]
    assert (tmp_path / "nodes.tsv").read_bytes() == b"old nodes"


@pytest.mark.parametrize(
    ("errno_", "name"),
    [
        (errno.EROFS, "EROFS"),
        (errno.ENOTDIR, "ENOTDIR"),
        (errno.EEXIST, "EEXIST"),
        (errno.ENAMETOOLONG, "ENAMETOOLONG"),
        (errno.EBUSY, "EBUSY"),
    ],
)
def test_each_refusal_of_the_disk_names_its_cause(tmp_path, monkeypatch, errno_, name):
    def refused(*args: object, **kwargs: object) -> None:
        raise OSError(errno_, os.strerror(errno_))

    monkeypatch.setattr(os, "replace", refused)
    target = tmp_path / "x.json"
    target.write_bytes(b"old")
    with pytest.raises(WriteError, match=rf"cannot write {target}: .*\({name}\)"):
        atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"old" and _strays(tmp_path) == []


def test_cli_export_onto_a_path_that_is_a_file_is_one_message(tmp_path):
    """cli.export / cli.compile / cli.generate / cli.review: `--out` naming a file."""
    afile = tmp_path / "afile"
    afile.write_text("keep me")
    code, out = cli("export", "--domain", "cardio", "--format", "kgx", "--out", afile)
    assert code == 2, out
    assert "Traceback" not in out and "error: cannot write" in out and str(afile) in out
    assert afile.read_text() == "keep me"


def test_cli_review_and_generate_onto_a_path_that_is_a_file(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("keep me")
    for args in (
        ("review", "--domain", "cardio", "--out", afile),
        ("generate", "--domain", "cardio", "--out", afile / "x.jsonl"),
    ):
        code, out = cli(*args)
        assert code == 2, (args, out)
        assert "Traceback" not in out and "error:" in out and str(afile) in out
    assert afile.read_text() == "keep me"


def test_cli_export_under_an_injected_enospc_leaves_no_partial_export(tmp_path, full_disk):
    """disk.export: a partial export (2 of 5 files) was left in the output folder."""
    out_dir = tmp_path / "kgx"
    code, out = cli("export", "--domain", "cardio", "--format", "kgx", "--out", out_dir)
    assert code == 2, out
    assert "No space left on device (ENOSPC)" in out and "Traceback" not in out
    assert not out_dir.exists() or list(out_dir.iterdir()) == []


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 64 kB tmpfs, where this machine allows mounting one (root in a container)."""
    mount = tmp_path / f"tmpfs-{uuid.uuid4().hex[:8]}"
    mount.mkdir()
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace')}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_disk_export_onto_a_full_tmpfs(small_tmpfs):
    """disk.export on a real full disk: one message, no partial export left behind."""
    out_dir = small_tmpfs / "kgx"
    code, out = cli("export", "--domain", "cardio", "--format", "kgx", "--out", out_dir)
    assert code == 2, out
    assert "No space left on device (ENOSPC)" in out and "Traceback" not in out
    assert not out_dir.exists() or list(out_dir.iterdir()) == []


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_kill_compile_strays_of_a_killed_replace_are_removed_next_time(tmp_path) -> None:
    """kill.compile: every compile killed mid-way left a `.cardiox.tmp-*` folder behind."""
    target = tmp_path / "cardio"
    dead, alive = _dead_pid(), os.getpid()
    (tmp_path / f".cardio.tmp-{dead}-abc").mkdir()
    (tmp_path / f".cardio.old-{dead}").mkdir()
    (tmp_path / f".cardio.tmp-{alive}-running").mkdir()  # a replace still running: kept
    (tmp_path / ".other.tmp-1-x").mkdir()  # another folder's: kept
    replace_folder(target, {"a.json": b"1"})
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f".cardio.tmp-{alive}-running",
        ".other.tmp-1-x",
        "cardio",
    ]


def test_ct_symlink_generated_a_linked_folder_is_written_through(tmp_path) -> None:
    """ct.symlink-generated: compile replaced the link with a folder and left the renamed
    link behind; the link now stays and points at the new content."""
    real = tmp_path / "elsewhere" / "cardio"
    real.mkdir(parents=True)
    (real / "old.json").write_bytes(b"old")
    link = tmp_path / "generated" / "cardio"
    link.parent.mkdir()
    link.symlink_to(real, target_is_directory=True)
    replace_folder(link, {"kg.json": b"new"})
    assert link.is_symlink() and (link / "kg.json").read_bytes() == b"new"
    assert not (link / "old.json").exists()
    assert sorted(p.name for p in link.parent.iterdir()) == ["cardio"]
    assert sorted(p.name for p in real.parent.iterdir()) == ["cardio"]


def test_ct_readonly_generated_a_mount_point_that_cannot_be_swapped(tmp_path, monkeypatch):
    """ct.readonly-generated: generated/<d> is a mount point; renaming it fails with EBUSY."""
    target = tmp_path / "cardio"
    target.mkdir()
    (target / "kg.json").write_bytes(b"old")
    real_replace = os.replace

    def busy(src, dst):
        if Path(src) == target:
            raise OSError(errno.EBUSY, os.strerror(errno.EBUSY), str(src), None, str(dst))
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", busy)
    with pytest.raises(WriteError, match=r"Device or resource busy \(EBUSY\)"):
        replace_folder(target, {"kg.json": b"new"})
    assert (target / "kg.json").read_bytes() == b"old" and _strays(tmp_path) == []


def test_disk_compile_onto_a_full_tmpfs(small_tmpfs):
    """disk.compile: compile --out onto a full 64 kB tmpfs; nothing left behind."""
    code, out = cli("compile", "--domain", "cardio", "--out", small_tmpfs, "--force")
    assert code == 2, out
    assert "No space left on device (ENOSPC)" in out and "Traceback" not in out
    assert list(small_tmpfs.iterdir()) == []


def test_ro_generated_compile_and_generate_on_a_read_only_folder(tmp_path, monkeypatch):
    """ro.generated (EROFS injected at the rename that publishes each write)."""

    def read_only(src, dst):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(dst))

    monkeypatch.setattr(os, "replace", read_only)
    for args in (
        ("compile", "--domain", "cardio", "--out", tmp_path / "g", "--force"),
        ("generate", "--domain", "cardio", "--out", tmp_path / "s.jsonl"),
    ):
        code, out = cli(*args)
        assert code == 2 and "Traceback" not in out, (args, out)
        assert "Read-only file system (EROFS)" in out, (args, out)
    assert [p for p in tmp_path.rglob("*") if not p.is_dir()] == []  # nothing half-written


def test_a_folder_swapped_out_by_a_killed_replace_is_put_back_not_removed(tmp_path) -> None:
    """Killed after the old folder was renamed aside and before the new one moved in: the
    stray `.old-<pid>` is the only copy of the data, so the next replace restores it first."""
    from kgbench.io import replace_folder

    target = tmp_path / "release"
    gone = 2**22 + 7  # a pid that is not running
    while True:
        try:
            os.kill(gone, 0)
            gone += 1
        except ProcessLookupError:
            break
        except PermissionError:
            gone += 1
    old = tmp_path / f".release.old-{gone}"
    (old / "gold").mkdir(parents=True)
    (old / "gold" / "gold.jsonl").write_text("kept\n", encoding="utf-8")
    replace_folder(target, {"new.txt": b"new"}, keep=["gold"])
    assert not old.exists()
    assert (target / "new.txt").read_bytes() == b"new"
    assert (target / "gold" / "gold.jsonl").read_text(encoding="utf-8") == "kept\n"


def test_a_streamed_file_is_written_whole_through_the_drop_behind(tmp_path, monkeypatch):
    """A file given as chunks is flushed and dropped from the page cache as it goes
    (`kgbench.io._write_streamed`): the same bytes, whatever the chunk and drop sizes."""
    import kgbench.io as kio

    monkeypatch.setattr(kio, "DROP_BEHIND_BYTES", 1000)
    drops: list[tuple[int, int]] = []
    real_fadvise = os.posix_fadvise

    def counted(fd: int, offset: int, length: int, advice: int) -> None:
        drops.append((offset, length))
        real_fadvise(fd, offset, length, advice)

    monkeypatch.setattr(os, "posix_fadvise", counted)
    chunks = [bytes([i % 251]) * (i * 37) for i in range(120)]
    target = tmp_path / "out"
    replace_folder(target, [("big/rows.json", iter(chunks)), ("small.json", b"{}")])
    assert (target / "big" / "rows.json").read_bytes() == b"".join(chunks)
    assert (target / "small.json").read_bytes() == b"{}"
    assert drops and drops[0][0] == 0  # contiguous ranges from the start
    assert all(a + n == b for (a, n), (b, _) in itertools.pairwise(drops))
    assert oct((target / "small.json").stat().st_mode & 0o777) == oct(
        (target / "big" / "rows.json").stat().st_mode & 0o777
    )


def test_a_streamed_file_under_enospc_keeps_the_old_folder(tmp_path, monkeypatch):
    target = tmp_path / "cardio"
    target.mkdir()
    (target / "kg.json").write_bytes(b"old")

    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    import kgbench.io as kio

    monkeypatch.setattr(kio, "DROP_BEHIND_BYTES", 10)
    monkeypatch.setattr(os, "fdatasync", no_space)
    with pytest.raises(WriteError, match="No space left on device"):
        replace_folder(target, [("kg.json", iter([b"x" * 100, b"y" * 100]))])
    assert (target / "kg.json").read_bytes() == b"old" and _strays(tmp_path) == []
