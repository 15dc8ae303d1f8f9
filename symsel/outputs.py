"""Where a command may write: the one check every output option goes through.

A command writes only regular files that it creates, or that it wrote before (a sweep's results file is
recognised by its header, a Parquet copy by its columns, a report folder's files by the ``.symsel-report`` marker
listing them). Everything else named by an output option is refused, untouched, with one line naming the option:
an empty path (it would mean the working folder), a NUL byte, a device (``/dev/null``, ``/dev/full``), a FIFO, a
socket, a folder where a file is expected, a file where a folder is expected, a dangling symbolic link, and a
regular file of the user's.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from symsel.errors import ParameterError

#: the marker file a report folder carries: the names of the files ``symsel report`` wrote there, one a line.
REPORT_MARKER = ".symsel-report"
_MARKER_HEAD = "# symsel report wrote these files here and rewrites only them (one name a line)"


def _refuse(path: Any, option: str, where: str, allowed: str, why: str) -> ParameterError:
    return ParameterError(option, str(path), f"{allowed}; {why}", where)


def path_kind(path: Path) -> str | None:
    """What is at ``path``, following symbolic links: ``None`` (nothing), ``"file"`` (a regular file),
    ``"folder"``, or what else it is (``"character device"``, ``"FIFO"``, ``"dangling symbolic link"``…)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "dangling symbolic link" if os.path.lexists(path) else None
    except NotADirectoryError:
        return None  # under a file: creating it fails, and the error then says why
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "folder"
    for test, name in ((stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"), (stat.S_ISFIFO, "FIFO"),
                       (stat.S_ISSOCK, "socket")):
        if test(mode):
            return name
    return "special file"


def _path(value: Any, option: str, where: str, allowed: str) -> Path:
    """``value`` as a path: a non-empty ``str`` or ``os.PathLike`` without NUL bytes."""
    if isinstance(value, bool) or not isinstance(value, str | os.PathLike):
        raise _refuse(repr(value), option, where, allowed,
                      f"a path is a str or os.PathLike, not {type(value).__name__}")
    text = os.fspath(value)
    if not isinstance(text, str):
        raise _refuse(repr(text), option, where, allowed, "a path is text, not bytes")
    if not text.strip():
        raise _refuse(text, option, where, allowed, "an empty path would write into the working folder")
    if "\0" in text:
        raise _refuse(text.replace("\0", "\\0"), option, where, allowed, "a path has no NUL byte")
    return Path(text)


def output_file(value: Any, option: str, where: str, allowed: str,
                ours: Callable[[Path], bool] | None = None) -> Path:
    """The file an output option names, checked before anything is read or written: a path where nothing is yet, or
    a regular file (an empty one, or one ``ours`` recognises as written by symsel; any regular file when ``ours`` is
    ``None``: the caller recognises it itself). Anything else is refused with a :class:`ParameterError` naming
    ``option``, its value and ``allowed``; so is a path that ends with a separator (``newdir/`` names a folder,
    though ``Path`` would drop the slash and write a file ``newdir``)."""
    path = _path(value, option, where, allowed)
    text = os.fspath(value)
    if text.endswith(os.sep) or (os.altsep is not None and text.endswith(os.altsep)):
        raise _refuse(text, option, where, allowed, "it ends with a path separator, so it names a folder, not a file")
    try:
        kind = path_kind(path)
    except OSError as exc:
        raise _refuse(path, option, where, allowed, f"it cannot be examined ({exc.strerror})") from None
    if kind is None:
        return path
    if kind != "file":
        raise _refuse(path, option, where, allowed, f"it is a {kind}")
    if ours is not None and path.stat().st_size > 0 and not ours(path):
        raise _refuse(path, option, where, allowed, "it is a file symsel did not write (move it, or choose another "
                      f"{option})")
    return path


def output_folder(value: Any, option: str, where: str, names: Iterable[str], marker: str = REPORT_MARKER) -> Path:
    """The folder an output option names, checked before anything is written, and marked: a folder that does not
    exist yet (created), or an existing one in which every file of ``names`` either does not exist or is a regular file
    that the folder's ``marker`` lists (written there by symsel before). The marker is then (re)written, listing
    ``names`` too, so the next run may rewrite them; files it does not list are never touched. Ownership is the
    marker's alone: a file's content (a ``summary.md`` that starts like symsel's, a user's edited copy) proves
    nothing, and a marker that is a symbolic link or not exactly what :func:`write_marker` writes is refused."""
    allowed = f"a new folder, or one whose files of those names symsel {where} wrote (its {marker} lists them)"
    folder = _path(value, option, where, allowed)
    kind = path_kind(folder)
    if kind not in (None, "folder"):
        raise _refuse(folder, option, where, allowed, f"it is a {kind}, not a folder")
    names = list(names)
    listed = read_marker(folder / marker, option, where, allowed) if kind == "folder" else set()
    for name in names:
        target = folder / name
        found = path_kind(target)
        if found is None:
            continue
        if found != "file" or os.path.islink(target):
            raise _refuse(folder, option, where, allowed,
                          f"its {name} is a {'symbolic link' if found == 'file' else found}")
        if name not in listed:
            raise _refuse(folder, option, where, allowed, f"its {name} exists and symsel did not write it: move it, "
                          f"or choose another {option}")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_marker(folder / marker, listed | set(names))
    except OSError as exc:
        raise _refuse(folder, option, where, allowed, f"it cannot be created or written ({exc.strerror})") from None
    return folder


#: the largest marker read (a marker lists a few hundred file names at most).
_MARKER_MAX_BYTES = 1 << 20


def read_marker(path: Path, option: str, where: str, allowed: str) -> set[str]:
    """The names a marker file lists (none if it does not exist). Refused: a symbolic link (never followed, whatever
    it points at), anything but a regular file, and a file that is not exactly what :func:`write_marker` writes
    (its head line, then distinct plain file names in sorted order, each line ended by a newline)."""
    if os.path.islink(path):
        raise _refuse(path.parent, option, where, allowed, f"its {path.name} is a symbolic link")
    kind = path_kind(path)
    if kind is None:
        return set()
    if kind != "file":
        raise _refuse(path.parent, option, where, allowed, f"its {path.name} is a {kind}")
    try:
        with open(path, "rb") as handle:
            raw = handle.read(_MARKER_MAX_BYTES + 1)
        text = raw.decode("utf-8") if len(raw) <= _MARKER_MAX_BYTES else ""
    except (OSError, UnicodeDecodeError):
        text = ""
    lines = text.split("\n")
    names = lines[1:-1]
    exact = (len(lines) >= 2 and lines[0] == _MARKER_HEAD and lines[-1] == "" and names == sorted(set(names))
             and all(_plain_name(name) for name in names))
    if not exact:
        raise _refuse(path.parent, option, where, allowed, f"its {path.name} is not a marker symsel wrote")
    return set(names)


def _plain_name(name: str) -> bool:
    """A file name a marker may list: not empty, not ``.``/``..``, no ``/``, NUL or line break."""
    return bool(name) and name not in (".", "..") and not any(c in name for c in "/\0\r")


def write_marker(path: Path, names: Iterable[str]) -> None:
    """Write a marker file listing ``names`` (sorted, one a line): into a new file beside it, then renamed over it,
    so a symbolic link in its place is replaced, never written through."""
    listed = sorted(set(names))
    if not all(_plain_name(name) for name in listed):
        raise ValueError(f"a marker lists plain file names only: {listed!r}")
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "x", encoding="utf-8", newline="\n") as handle:
            handle.write("\n".join([_MARKER_HEAD, *listed]) + "\n")
        os.replace(temporary, path)
    finally:
        if os.path.lexists(temporary):
            os.unlink(temporary)


def add_to_marker(folder: Path, paths: Iterable[str | Path], marker: str = REPORT_MARKER) -> None:
    """List in ``folder``'s marker the files of ``paths`` that lie in it (those a command wrote there)."""
    allowed = "a folder symsel wrote"
    names = {Path(p).name for p in paths if Path(p).parent == folder}
    listed = read_marker(folder / marker, "--out", "report", allowed)
    if not names <= listed:
        write_marker(folder / marker, listed | names)
