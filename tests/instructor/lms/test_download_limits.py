"""Downloads with bounds (instructor.lms.intake.DownloadLimits): a file past the limit per
file or per download is refused with a message naming it, checked on the sizes the zip
declares and again on the bytes while they are copied in chunks; the rest of the download
is read and written. Canvas's names (tests/instructor/lms/test_lms_rules.py)."""

from __future__ import annotations

import json
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from instructor.lms.intake import (
    MIB,
    DownloadLimits,
    IntakeError,
    read_download,
    write_submissions,
)

NB = "01_vector_sets"
HONEST = [f"smithjane_13_101_{NB}.ipynb", f"doejohn_15_102_{NB}.ipynb"]


def _notebook(tag: str, padding: int = 0) -> bytes:
    """A small notebook, or one ``padding`` bytes longer (spaces compress like a bomb)."""
    text = json.dumps({"cells": [], "metadata": {"tag": tag}, "nbformat": 4, "nbformat_minor": 5})
    return text.encode() + b" " * padding


def _zip(path: Path, members: dict[str, bytes], **options: object) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name in HONEST:
            archive.writestr(name, _notebook(name))
        for name, data in members.items():
            archive.writestr(name, data, **options)
    return path


def _written(root: Path) -> set[str]:
    return {p.parent.parent.name for p in (root / "submitted").glob(f"*/{NB}/{NB}.ipynb")}


def _refused(intake, member: str) -> str:
    reasons = {s.member: s.reason for s in intake.unmatched}
    assert member in reasons, reasons
    return reasons[member]


def test_a_zip_bomb_is_refused_by_its_declared_size(tmp_path: Path) -> None:
    """100 MiB in a zip of well under 1 MiB (the issue's: 600 MiB from 755 KiB)."""
    bomb = f"bombjoe_16_103_{NB}.ipynb"
    archive = _zip(tmp_path / "bomb.zip", {bomb: _notebook("bomb", 100 * MIB)})
    assert archive.stat().st_size < MIB
    intake = read_download(archive, [NB])
    assert [s.student for s in intake.students] == ["doejohn", "smithjane"]
    reason = _refused(intake, bomb)
    assert reason.startswith("refused: declares 104,857,") and "32 MiB per file" in reason
    assert "--max-file-mib" in reason
    write_submissions(intake, archive, tmp_path / "submitted", NB)
    assert _written(tmp_path) == {"doejohn", "smithjane"}


def test_the_limits_are_the_instructor_s(tmp_path: Path) -> None:
    big = f"bigfile_16_103_{NB}.ipynb"
    archive = _zip(tmp_path / "big.zip", {big: _notebook("big", 40 * MIB)})
    assert "32 MiB per file" in _refused(read_download(archive, [NB]), big)
    roomy = DownloadLimits(file_bytes=48 * MIB)
    intake = read_download(archive, [NB], limits=roomy)
    assert intake.unmatched == () and len(intake.students) == 3
    write_submissions(intake, archive, tmp_path / "submitted", NB, limits=roomy)
    assert _written(tmp_path) == {"bigfile", "doejohn", "smithjane"}


def test_the_download_s_limit_refuses_the_file_that_passes_it_and_reads_on(
    tmp_path: Path,
) -> None:
    """Files count in the students' order: aaron (3 MiB) and bella (3 MiB) fit in 7 MiB,
    carl's 3 MiB would pass it, doejohn's and smithjane's few bytes still fit."""
    members = {
        f"{name}_{uid}_{uid}_{NB}.ipynb": _notebook(name, 3 * MIB)
        for uid, name in enumerate(("aaron", "bella", "carl"), start=20)
    }
    archive = _zip(tmp_path / "many.zip", members)
    limits = DownloadLimits(download_bytes=7 * MIB)
    intake = read_download(archive, [NB], limits=limits)
    assert [s.student for s in intake.students] == ["aaron", "bella", "doejohn", "smithjane"]
    reason = _refused(intake, f"carl_22_22_{NB}.ipynb")
    assert "would pass the limit of 7 MiB per download (--max-download-mib)" in reason
    write_submissions(intake, archive, tmp_path / "submitted", NB, limits=limits)
    assert _written(tmp_path) == {"aaron", "bella", "doejohn", "smithjane"}


def _patch(archive: Path, member: str, local: int, central: int, value: bytes) -> None:
    """Write ``value`` at offset ``local`` of ``member``'s local header and ``central`` of its
    central directory entry: what zipfile itself would never write."""
    data = bytearray(archive.read_bytes())
    name = member.encode()
    for signature, offset, name_at in ((b"PK\x03\x04", local, 30), (b"PK\x01\x02", central, 46)):
        at = data.find(signature)
        while at != -1:
            if data[at + name_at : at + name_at + len(name)] == name:
                data[at + offset : at + offset + len(value)] = value
            at = data.find(signature, at + 4)
    archive.write_bytes(bytes(data))


def _patch_sizes(archive: Path, member: str, size: int) -> None:
    """Make the zip declare ``size`` bytes for ``member`` (uncompressed size fields)."""
    _patch(archive, member, 22, 24, size.to_bytes(4, "little"))


def test_a_member_that_declares_less_than_it_holds_is_refused(tmp_path: Path) -> None:
    """Declared: 100 bytes; held: 40 MiB. Never more than the declared bytes come out (and
    then its checksum fails): refused, naming it, the others written."""
    liar = f"liar_16_103_{NB}.ipynb"
    archive = _zip(tmp_path / "liar.zip", {liar: _notebook("liar", 40 * MIB)})
    _patch_sizes(archive, liar, 100)
    assert zipfile.ZipFile(archive).getinfo(liar).file_size == 100
    intake = read_download(archive, [NB])
    reason = _refused(intake, liar)
    assert "cannot be read from the zip (BadZipFile" in reason, reason
    write_submissions(intake, archive, tmp_path / "submitted", NB)
    assert _written(tmp_path) == {"doejohn", "smithjane"}


def test_the_copy_enforces_the_limits_whatever_was_read_before(tmp_path: Path) -> None:
    """The zip is replaced between reading and writing (the same names, one member now
    40 MiB): the copy stops at the limit, names the member, and writes nothing."""
    member = f"swapper_16_103_{NB}.ipynb"
    archive = _zip(tmp_path / "d.zip", {member: _notebook("small")})
    intake = read_download(archive, [NB])
    assert intake.unmatched == ()
    _zip(archive, {member: _notebook("large", 40 * MIB)})
    with pytest.raises(IntakeError, match=rf"{member}: more bytes than read before.*32 MiB"):
        write_submissions(intake, archive, tmp_path / "submitted", NB)
    assert not (tmp_path / "submitted").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["d.zip"]  # no scratch left behind


def test_members_zipfile_cannot_read_are_refused_one_by_one(tmp_path: Path) -> None:
    encrypted, corrupt = f"locked_16_103_{NB}.ipynb", f"broken_17_104_{NB}.ipynb"
    archive = tmp_path / "odd.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for name in HONEST:
            handle.writestr(name, _notebook(name))
        handle.writestr(encrypted, _notebook("locked"))
        handle.writestr(corrupt, _notebook("BROKEN"))
    data = archive.read_bytes()
    archive.write_bytes(data.replace(b"BROKEN", b"BR0KEN", 1))  # the CRC no longer matches
    _patch(archive, encrypted, 6, 8, b"\x01\x00")  # "encrypted": zipfile asks for a password
    intake = read_download(archive, [NB])
    assert "cannot be read from the zip (RuntimeError" in _refused(intake, encrypted)
    assert "cannot be read from the zip (BadZipFile" in _refused(intake, corrupt)
    write_submissions(intake, archive, tmp_path / "submitted", NB)
    assert _written(tmp_path) == {"doejohn", "smithjane"}


def test_no_member_is_read_whole_into_memory(tmp_path: Path) -> None:
    """A 60 MiB member, allowed: reading and writing it allocate a few MiB at most (the
    chunks), not the member (the issue's grader grew by 850 MiB for a 600 MiB bomb)."""
    member = f"large_16_103_{NB}.ipynb"
    archive = _zip(tmp_path / "large.zip", {member: _notebook("large", 60 * MIB)})
    roomy = DownloadLimits(file_bytes=64 * MIB)
    tracemalloc.start()
    try:
        intake = read_download(archive, [NB], limits=roomy)
        write_submissions(intake, archive, tmp_path / "submitted", NB, limits=roomy)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert intake.unmatched == ()
    assert (tmp_path / "submitted" / "large" / NB / f"{NB}.ipynb").stat().st_size > 60 * MIB
    assert peak < 8 * MIB, f"peak {peak / MIB:.1f} MiB"
