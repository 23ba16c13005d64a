"""Whether a path is a catalog file the engine may read or write, and its bytes.

Catalogs come from strangers (a pull request, a translation platform), and the build
runs where secrets can be read. So a catalog is a regular file reached without a
symbolic link: a link (to a file, or a folder on the way), a directory or a pipe named
``*.po``, an unreadable file or one larger than any page's catalog can be is refused, in
reading and in writing, with one line naming the file relative to the project and the
remedy, and nothing of what it holds or points to.

Why no link at all, even one that points inside ``i18n/``: a link's target can change
without the link changing, a link inside the repository may point out of it on another
checkout (``../../..``), and nothing in a catalog workflow needs one (gettext tools and
translation platforms write files). The rule is checked without knowing where the
project is: :class:`po_i18n.project.Project` resolves its root, so a catalog path it
makes has no link in it unless one lies under the root, so no component of the path
may be a link (``os.lstat``; a dangling link and a loop are links too).
"""
from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

from mkdocs.exceptions import PluginError

__all__ = ["CatalogError", "MAX_BYTES", "exists", "place_problem", "printable", "read", "shown", "write"]

# No page's catalog comes near this (the course's largest is 0.13 MB: a page of about
# 40,000 words); a file this large is not a catalog, and parsing it would slow the build.
MAX_BYTES = 16 * 1024 * 1024


class CatalogError(PluginError):
    """A catalog cannot be read: ``str(error)`` is ``file:line: reason; remedy``, or
    ``file: reason; remedy`` for a problem of the file itself (a link, a directory).

    A :class:`mkdocs.exceptions.PluginError`, so a hook can let it pass: MkDocs stops the
    build with the message and no traceback.

    Attributes:
        path: the catalog file (``pathlib.Path``).
        line: the 1-based line of the problem, or ``None`` for the file as a whole.
        reason: what is wrong and the remedy, without the ``file:line:`` prefix.
    """

    def __init__(self, path: Path, line: int | None, reason: str) -> None:
        self.path, self.line, self.reason = Path(path), None if line is None else int(line), reason
        super().__init__(self.at(shown(path)))

    def at(self, name: str) -> str:
        """The message with the file called ``name`` (``i18n/ru/_site.po:3: reason``)."""
        return f"{name}:{self.line}: {self.reason}" if self.line is not None else f"{name}: {self.reason}"


def shown(path: Path) -> str:
    """How messages name a file: relative to the working directory when it lies under it
    (``i18n/ru/ddp-basics.po``), else as given, in :func:`printable` form. The path
    itself is not resolved: a link is named as the link, never as what it points to."""
    absolute = Path(os.path.abspath(path))
    try:
        return printable(absolute.relative_to(Path.cwd()).as_posix())
    except ValueError:
        return printable(str(path))


def printable(name: str) -> str:
    """A file name as a message may print it: unchanged when every character is printable
    (``str.isprintable``: no control, format or separator character but the space), else
    with those written as escapes (``x\\nERROR.po``), so a name from a pull request can
    neither break a message's one line nor send a terminal escape sequence."""
    if name.isprintable():
        return name
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in name)


_LINK = "a symbolic link, and catalogs are read and written only as real files and folders inside i18n/"


def place_problem(path: Path) -> str | None:
    """Why ``path`` cannot be a catalog's place, as a reason and remedy: a ``..`` in it,
    or a symbolic link in it (the file, or a folder on the way); ``None`` when it can.
    What is there (a file, a directory, nothing) is not looked at."""
    absolute = path.absolute()
    if ".." in absolute.parts:
        return "its path goes up a folder ('..'); name catalogs as i18n/<language>/<page>.po"
    if absolute.is_symlink():  # lstat: a dangling link and a loop are links too
        return f"is {_LINK}; replace the link with a copy of what it points to"
    for folder in absolute.parents:
        if folder.is_symlink():
            return f"its folder {shown(folder)} is {_LINK}; replace the link with a copy of the folder"
    return None


def exists(path: Path) -> bool:
    """Whether anything is at ``path`` (a file, a directory, a link, even a dangling one):
    where there is something, it is a catalog to read or refuse, never a missing one."""
    return os.path.lexists(path)


def _open_problem(exc: OSError, doing: str) -> str:
    """The reason for an ``OSError`` of ``open``, from its errno alone (the message of the
    exception names the path, which may be absolute)."""
    if exc.errno == errno.ELOOP:
        return f"is {_LINK}; replace the link with a copy of what it points to"
    if exc.errno == errno.EISDIR:
        return "is a directory, not a catalog file; rename or remove it (catalogs are files i18n/<language>/<page>.po)"
    if exc.errno in (errno.EACCES, errno.EPERM):
        access = "read" if doing == "read" else "write"
        return f"cannot be {doing} (permission denied); give your user {access} permission to it and its folder"
    if exc.errno == errno.ENXIO:
        return "is not a regular file (a named pipe, socket or device); replace it with the catalog file"
    return f"cannot be {doing} ({os.strerror(exc.errno) if exc.errno else 'input/output error'}); check the file system"


def _kind_problem(mode: int) -> str | None:
    """Why a file of this ``st_mode`` is not a catalog; ``None`` for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory, not a catalog file; rename or remove it (catalogs are files i18n/<language>/<page>.po)"
    return "is not a regular file (a named pipe, socket or device); replace it with the catalog file"


def read(path: Path) -> bytes:
    """The bytes of a catalog file.

    Opened without following a link (``O_NOFOLLOW``) and without waiting on a named pipe
    (``O_NONBLOCK``), then checked to be a regular file of at most :data:`MAX_BYTES`.

    Args:
        path: the ``.po`` file, as :class:`po_i18n.project.Project` makes it.

    Returns:
        Its bytes.

    Raises:
        CatalogError: it is missing, a link or reached through one, not a regular file,
            unreadable or too large; the message names the file (relative to the working
            directory) and the remedy, never what it holds or points to.
    """
    problem = place_problem(path)
    if problem:
        raise CatalogError(path, None, problem)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise CatalogError(path, None, "no such file; create it with: po-i18n update") from None
    except OSError as exc:
        raise CatalogError(path, None, _open_problem(exc, "read")) from None
    try:
        info = os.fstat(fd)
        problem = _kind_problem(info.st_mode)
        if problem:
            raise CatalogError(path, None, problem)
        if info.st_size > MAX_BYTES:
            raise CatalogError(path, None, f"is {info.st_size / 2**20:.1f} MB, more than the {MAX_BYTES // 2**20} MB "
                                           "a catalog may have (no page's catalog comes near it); is it a catalog?")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise CatalogError(path, None, _open_problem(exc, "read")) from None
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:  # it grew while being read
        raise CatalogError(path, None, f"is more than the {MAX_BYTES // 2**20} MB a catalog may have; is it a catalog?")
    return data


def write(path: Path, text: str) -> None:
    """Write a catalog file as UTF-8, replacing it in one step.

    The text goes to a new file beside it, which then replaces ``path`` (``os.replace``):
    an interrupted write never leaves half a catalog, and a link is never written
    through. Missing folders under ``i18n/`` are created. The new file keeps the old
    one's permissions.

    Args:
        path: the ``.po`` file.
        text: its new content.

    Raises:
        CatalogError: ``path`` or a folder on the way is a link, ``path`` is something
            other than a regular file, or it cannot be written; nothing is written then.
    """
    problem = place_problem(path)
    if problem:
        raise CatalogError(path, None, problem)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        mode = 0o644
    except OSError as exc:
        raise CatalogError(path, None, _open_problem(exc, "written")) from None
    else:
        problem = _kind_problem(info.st_mode)
        if problem:
            raise CatalogError(path, None, problem)
        mode = stat.S_IMODE(info.st_mode)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        problem = place_problem(path)  # a folder made meanwhile is a link
        if problem:
            raise CatalogError(path, None, problem)
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                f.write(text)
            os.chmod(temporary, mode)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as exc:
        raise CatalogError(path, None, _open_problem(exc, "written")) from None
