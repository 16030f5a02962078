"""What audit made in a reports folder, and how it proves it: the only things it
deletes or replaces.

A reports folder is shared with the user, with other reports and with other
audit runs, so audit touches a path there only when it can prove the path is its
own: by its exact name (never by a prefix) and, for a folder, by the marker it
wrote inside when it made it. Every name audit makes beside a report ``NAME``
is hidden and ends in a suffix of its own::

    NAME                 a link to the current version (relative, in the same folder)
    .NAME.lock           the lock of the name (never deleted)
    .NAME.partial-HEX    a run's staging folder                 (marked)
    .NAME.report-HEX     a finished version of the report       (marked)
    .NAME.link-HEX       a new link, before it is renamed over NAME
    .NAME.failed         the staging folder of the last failed run (marked)

``HEX`` is 8 hexadecimal digits. A report name never starts with a dot and no
suffix holds one, so an entry belongs to exactly one name, read from its last
dot (:func:`owner_of`): the leftovers of ``x`` are never those of ``x.y``, and
reports named ``x``, ``x.y``, ``x.partial-1234abcd`` or ``x-ffmc`` live side
by side.

The marker is the hidden file :data:`MARKER` holding the report's name and a
random token; a folder is audit's only if it is a real folder (not a link)
under one of the names above and its marker is a regular file naming the same
report. A finished version also holds the hidden file :data:`INVENTORY`, written
as it is published: every file, folder and link audit wrote in it, with each
file's size and time of change. A version is replaced only while it holds
nothing else and none of its files changed (:func:`not_made`), and no other link
of the reports folder leads to it (:func:`links_to`): a note or a table the user
put in a report, or a figure they edited, is never removed (the run is refused
before any work, naming them), nor a report kept under another name (left in
place). A link is audit's only if its own text is ``.NAME.report-HEX``: the
version folder of the same name, in the same folder. Removing audit's folder
never goes through a link (:func:`shutil.rmtree` of a real folder removes the
links inside it, not what they point to).

Reports written before the marker existed (a link ``NAME`` to
``.NAME.report-HEX`` holding no marker) are taken as audit's when the folder
has exactly the layout audit wrote (:func:`earlier_report`): a ``manifest.json``
with the keys audit wrote, and nothing at the top but the files and folders a
report holds. Anything else at a report's place -- a folder, a file, a link to
elsewhere, a version folder without that proof -- is refused by
:func:`check_place` before any work starts, naming the path and what to do.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from audit.exceptions import ReportError

#: The marker file audit writes into every folder it makes in a reports folder.
MARKER = ".audit-report"
#: Opening a file to read: never through a link, never waiting (a FIFO would wait for a
#: writer for ever); what is opened is then taken only if it is a regular file.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
#: What a finished version holds, written as it is published (:func:`write_inventory`).
INVENTORY = ".audit-files"
#: What the marker says it is (its ``made_by``).
MADE_BY = "audit report folder"
#: The suffixes of the hidden names audit makes beside a report (after ``.NAME.``).
SUFFIX = re.compile(r"(?P<kind>partial|report|link)-(?P<hex>[0-9a-f]{8})|(?P<fixed>failed|lock)")
#: What an earlier audit wrote at the top of a report folder.
REPORT_ENTRIES = frozenset({"index.html", "manifest.json", "input", "figures", "tables"})
#: What a run's staging folder may hold at the top besides (the outputs lists of its
#: notebooks, :data:`audit.report.outputs.LOGS`, removed as the report is finished).
STAGING_ENTRIES = frozenset({"logs"})
#: Keys of an earlier audit's manifest: the notebooks' run header, or the streamed tables'.
NOTEBOOK_MANIFEST = frozenset({"input_file", "input_sha256", "parameters", "audit_version"})
STREAMED_MANIFEST = frozenset({"engine", "files", "passes", "parameters"})

LINK_NOT_OURS = (
    "{path} is a link to {target}, which audit did not make; audit replaces only a link "
    "to a report it wrote: remove the link yourself (what it points to stays) or choose "
    "another --name"
)
FOLDER_NOT_OURS = (
    "{path} is a folder audit did not make (an audit report is a link to a hidden folder "
    "beside it); move it away or choose another --name"
)
FILE_NOT_OURS = "{path} is not a report written by audit; move it away or choose another --name"
VERSION_NOT_OURS = (
    "{path} is a link to {version}, which holds neither audit's marker nor the layout of "
    "a report audit wrote; move both away or choose another --name"
)
CHANGED = "{path} changed while the report was being written; the new report is kept in {kept}"
NOT_MADE = (
    "{path} holds files audit did not write, or that changed since ({entries}; in "
    "{version}); audit replaces a report only while it holds what audit wrote, unchanged: "
    "move them out, or choose another --name"
)


@dataclass(frozen=True)
class Version:
    """A finished version folder of a report, as found: its path and its marker's token
    (``None`` for a report of an earlier audit, proved by its layout)."""

    path: Path
    token: str | None


def owner_of(entry: str) -> tuple[str, str] | None:
    """``(report name, suffix)`` of a hidden name audit makes, else ``None``.

    >>> owner_of(".x.y.partial-0123abcd")
    ('x.y', 'partial-0123abcd')
    >>> owner_of(".x.partial-0123abcd.lock")
    ('x.partial-0123abcd', 'lock')
    >>> owner_of(".x.partial-0123") is None
    True
    """
    if not entry.startswith("."):
        return None
    name, dot, suffix = entry[1:].rpartition(".")
    if not dot or not name or name.startswith(".") or not SUFFIX.fullmatch(suffix):
        return None
    return name, suffix


def entries_of(root: Path, name: str) -> list[Path]:
    """The paths in ``root`` whose exact names are the hidden names of report ``name``."""
    return sorted(p for p in root.iterdir() if (owner_of(p.name) or ("",))[0] == name)


def write_marker(folder: Path, name: str) -> str:
    """Mark the new ``folder`` as made by audit for report ``name``; return the token."""
    token = secrets.token_hex(16)
    text = json.dumps({"made_by": MADE_BY, "report": name, "token": token}) + "\n"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
    with os.fdopen(os.open(folder / MARKER, flags, 0o644), "w", encoding="utf-8") as out:
        out.write(text)
    return token


def marker_token(folder: Path, name: str) -> str | None:
    """The token of audit's marker in the real folder ``folder`` for report ``name``;
    ``None`` when ``folder`` is a link, not a folder, or holds no such marker."""
    if not _is_real_dir(folder):
        return None
    try:
        fd = os.open(folder / MARKER, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, encoding="utf-8") as marker:
        if not stat.S_ISREG(os.fstat(marker.fileno()).st_mode):
            return None
        try:
            content = json.loads(marker.read(4096))
        except (ValueError, UnicodeDecodeError):
            return None
    if not isinstance(content, dict) or content.get("made_by") != MADE_BY:
        return None
    token = content.get("token")
    if content.get("report") != name or not isinstance(token, str):
        return None
    return token if re.fullmatch(r"[0-9a-f]{32}", token) else None


def earlier_report(folder: Path, notebooks: Iterable[str]) -> bool:
    """Whether the real folder ``folder`` has exactly the layout of a report written by
    an audit from before the marker: a ``manifest.json`` object with the keys audit
    wrote (the notebooks' run header or the streamed tables'), and at the top only
    the entries a report holds (``notebooks`` names the notebook files it may hold)."""
    if not _is_real_dir(folder):
        return False
    allowed = REPORT_ENTRIES | {f"{n}.{ext}" for n in notebooks for ext in ("ipynb", "html")}
    try:
        if any(entry not in allowed for entry in os.listdir(folder)):
            return False
        manifest = folder / "manifest.json"
        if not stat.S_ISREG(os.lstat(manifest).st_mode):
            return False
        content = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    if not isinstance(content, dict):
        return False
    return NOTEBOOK_MANIFEST <= content.keys() or STREAMED_MANIFEST <= content.keys()


def _entries(folder: Path) -> dict[str, list]:
    """Every entry under ``folder`` but the marker and the inventory, by its path within
    it: ``["dir"]``, ``["link", target]`` or ``["file", size, time of change in ns]``
    (links are not followed)."""
    found: dict[str, list] = {}
    for top, folders, files in os.walk(folder):
        for entry in [*folders, *files]:
            path = Path(top) / entry
            relative = path.relative_to(folder).as_posix()
            if relative in (MARKER, INVENTORY):
                continue
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                found[relative] = ["link", os.readlink(path)]
            elif stat.S_ISDIR(info.st_mode):
                found[relative] = ["dir"]
            else:
                found[relative] = ["file", info.st_size, info.st_mtime_ns]
    return found


def write_inventory(folder: Path, token: str) -> None:
    """Record in the finished ``folder`` every entry audit wrote there (its marker's
    ``token`` beside them): what :func:`not_made` compares the folder with."""
    text = json.dumps({"made_by": MADE_BY, "token": token, "entries": _entries(folder)})
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
    with os.fdopen(os.open(folder / INVENTORY, flags, 0o644), "w", encoding="utf-8") as out:
        out.write(text + "\n")


def not_made(version: Version, notebooks: Iterable[str]) -> list[str]:
    """The entries of ``version`` audit did not write as they are: not in its inventory
    (added), or a file changed since (by its size or time of change); a folder holding
    only such entries is named alone.  A version without an inventory (a run's staging
    folder; a report written before inventories) is judged by its top level, the entries
    a report holds (:func:`earlier_report`), and by what its manifest lists below it
    (:func:`_unlisted`)."""
    try:
        fd = os.open(version.path / INVENTORY, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except OSError:
        fd = None
    if fd is None:  # a staging folder; marked, from before inventories; an earlier audit's
        allowed = REPORT_ENTRIES | STAGING_ENTRIES | {MARKER}
        allowed |= {f"{n}.{ext}" for n in notebooks for ext in ("ipynb", "html")}
        top = sorted(e for e in os.listdir(version.path) if e not in allowed)
        return top + _unlisted(version.path)
    with os.fdopen(fd, encoding="utf-8") as inventory:
        try:
            content = json.loads(inventory.read())
        except (ValueError, UnicodeDecodeError):
            content = None
    made = content.get("entries") if isinstance(content, dict) else None
    if not isinstance(made, dict) or content.get("token") != version.token:
        return [INVENTORY]  # not the inventory audit wrote: nothing in the folder is proved
    found = _entries(version.path)
    others = [e for e, info in found.items() if made.get(e) != info]
    others = [e for e in others if not _own_checkpoint(version.path, e, made, found)]
    return _outermost(others)


#: The folder Jupyter keeps a notebook's checkpoints in, beside it, once it is opened.
CHECKPOINTS = ".ipynb_checkpoints"


def _own_checkpoint(folder: Path, entry: str, made: dict, found: dict) -> bool:
    """Whether ``entry`` of the report ``folder`` is Jupyter's checkpoint of a notebook
    audit wrote there, unchanged, and holds its very bytes (``.ipynb_checkpoints/
    ffmc-checkpoint.ipynb``, written as the notebook was opened), or the folder of such
    checkpoints: a copy of what audit wrote, whose removal loses nothing. Any other
    checkpoint (of a notebook edited and saved) is the user's."""
    if entry == CHECKPOINTS:
        inside = [e for e in found if e.startswith(f"{CHECKPOINTS}/")]
        return found[entry] == ["dir"] and all(
            _own_checkpoint(folder, e, made, found) for e in inside
        )
    top, _, name = entry.partition("/")
    if top != CHECKPOINTS or not name.endswith("-checkpoint.ipynb") or "/" in name:
        return False
    notebook = name.removesuffix("-checkpoint.ipynb") + ".ipynb"
    if found[entry][0] != "file" or notebook not in made or made[notebook] != found.get(notebook):
        return False
    if found[entry][1] != found[notebook][1]:  # of another size: not its bytes
        return False
    return _same_bytes(folder / entry, folder / notebook)


def _same_bytes(first: Path, second: Path) -> bool:
    """Whether two regular files hold the same bytes, read a block at a time (a FIFO, a
    device or a link is never the same as anything)."""
    try:
        a = open(os.open(first, os.O_RDONLY | _NOFOLLOW | _NONBLOCK), "rb")  # noqa: SIM115
    except OSError:
        return False
    with a:
        try:
            b = open(os.open(second, os.O_RDONLY | _NOFOLLOW | _NONBLOCK), "rb")  # noqa: SIM115
        except OSError:
            return False
        with b:
            return _same_open(a, b)


def _same_open(a, b) -> bool:
    if not all(stat.S_ISREG(os.fstat(f.fileno()).st_mode) for f in (a, b)):
        return False
    while True:
        block = a.read(1 << 20)
        if block != b.read(1 << 20):
            return False
        if not block:
            return True


def _unlisted(folder: Path) -> list[str]:
    """In a finished report without an inventory (written before audit kept one), what
    its ``manifest.json`` does not name below ``tables/``, ``figures/`` and ``input/``:
    each table, each figure (its PNG and SVG) and each copy of an input it lists; none in
    a folder without a manifest (a run's staging folder, which has none until its end),
    or one from before the manifest listed them.
    A file the user put in ``tables/`` was removed with such a report."""
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return []
    if not isinstance(manifest, dict):
        return []
    listed: set[str] = set()

    def collect(node) -> None:  # every "tables/...", "figures/...", "input/..." it names
        if isinstance(node, dict):
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)
        elif isinstance(node, str) and node.startswith(("tables/", "figures/", "input/")):
            listed.add(node)
            if node.startswith("figures/") and node.endswith(".png"):
                listed.add(node[: -len(".png")] + ".svg")

    collect(manifest)
    found = []
    # (a manifest from before audit listed its outputs, or its copies, proves none)
    checked = (["tables", "figures"] if "outputs" in manifest else []) + (
        ["input"] if any(n.startswith("input/") for n in listed) else []
    )
    for part in checked:
        for entry, info in _entries(folder / part).items():
            path = f"{part}/{entry}"
            if info[0] == "dir" and any(n.startswith(path + "/") for n in listed):
                continue  # a folder holding what it lists (input/1/, input/accuracy/)
            if path not in listed:
                found.append(path)
    return _outermost(found)


def _outermost(entries: list[str]) -> list[str]:
    """``entries`` (paths within a folder) sorted, less those inside another of them: a
    folder of the user's is named, not each file in it."""
    return sorted(e for e in entries if not any(e.startswith(o + "/") for o in entries))


def find_version(folder: Path, name: str, notebooks: Iterable[str]) -> Version | None:
    """``folder`` as a version of report ``name`` if it is audit's, else ``None``."""
    token = marker_token(folder, name)
    if token is not None:
        return Version(folder, token)
    if earlier_report(folder, notebooks):
        return Version(folder, None)
    return None


def link_target(link: Path, name: str) -> str | None:
    """The version name the link ``link`` holds, if it is ``.NAME.report-HEX``."""
    try:
        target = os.readlink(link)
    except OSError:
        return None
    owner = owner_of(target) if "/" not in target else None
    if owner is None or owner[0] != name or not owner[1].startswith("report-"):
        return None
    return target


def check_place(root: Path, name: str, notebooks: Iterable[str]) -> Version | None:
    """What stands at ``root/name``: nothing or a link of audit's to a missing version
    (``None``), or a link to a version of audit's (that version); anything else is
    refused with :class:`ReportError`, naming it and what to do."""
    final = root / name
    try:
        mode = os.lstat(final).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(mode):
        target = link_target(final, name)
        if target is None:
            raise ReportError(LINK_NOT_OURS.format(path=final, target=os.readlink(final)))
        version = root / target
        if not os.path.lexists(version):
            return None  # a lost version: the link alone is replaced
        found = find_version(version, name, notebooks)
        if found is None:
            raise ReportError(VERSION_NOT_OURS.format(path=final, version=version))
        others = not_made(found, notebooks)
        if others:
            raise ReportError(NOT_MADE.format(path=final, entries=listed(others), version=version))
        return found
    if stat.S_ISDIR(mode):
        raise ReportError(FOLDER_NOT_OURS.format(path=final))
    raise ReportError(FILE_NOT_OURS.format(path=final))


def links_to(version: Path, name: str) -> list[Path]:
    """The links in ``version``'s reports folder, other than report ``name``'s own, that
    lead to it: a report renamed (``mv reports/x reports/x-old``) or copied as its link
    (``cp -r``), which the user keeps under that name."""
    try:
        entries = list(os.scandir(version.parent))
        real = os.path.realpath(version)
    except OSError:
        return []
    found = []
    for entry in entries:
        if entry.name == name or (owner_of(entry.name) or ("",))[0] == name:
            continue
        try:
            if entry.is_symlink() and os.path.realpath(entry.path) == real:
                found.append(Path(entry.path))
        except OSError:
            continue
    return sorted(found)


@dataclass(frozen=True)
class Kept:
    """Why :func:`remove_folder` kept a folder: with neither ``links`` nor ``others``, it
    is not audit's (no marker of the name, or another token); ``links``: the links of the
    reports folder leading to it; ``others``: what audit did not write there."""

    links: tuple[Path, ...] = ()
    others: tuple[str, ...] = ()
    #: Why it could not be removed (in plain words), where the system refused.
    error: str = ""


def remove_folder(
    path: Path, name: str, token: str | None, notebooks: Iterable[str]
) -> Kept | None:
    """Remove audit's folder ``path`` of report ``name``; return None once removed, else
    why it was kept (:class:`Kept`).

    Removed only if it is a real folder (never through a link) and still audit's:
    its marker holds ``token`` (any token of the name when ``token`` is ``None`` and
    the folder is marked), or it has the layout of an earlier audit's report; and no
    other link of the reports folder leads to it (:func:`links_to`); and it holds
    nothing audit did not write there (:func:`not_made`; a staging folder, which has no
    inventory yet, is judged by its top level).
    """
    found = find_version(path, name, notebooks)
    if found is None or (token is not None and found.token != token):
        return Kept()
    links = links_to(path, name)
    if links:
        return Kept(links=tuple(links))
    others = not_made(found, notebooks)
    if others:
        return Kept(others=tuple(others))
    try:  # its marker last: a folder the system would not let go of whole stays audit's
        for entry in os.listdir(path):
            if entry != MARKER:
                inside = path / entry
                if _is_real_dir(inside):
                    shutil.rmtree(inside)
                else:
                    inside.unlink()
        (path / MARKER).unlink(missing_ok=True)  # (an earlier audit's report has none)
        path.rmdir()
    except OSError as refused:
        return Kept(error=f"{refused.strerror or refused}: {refused.filename or path}")
    return None


def remove_link(path: Path, name: str) -> bool:
    """Remove ``path`` if it is a link of audit's (to ``.NAME.report-HEX``)."""
    if not path.is_symlink() or link_target(path, name) is None:
        return False
    path.unlink()
    return True


def listed(entries: list[str], most: int = 5) -> str:
    """``entries`` quoted, the first ``most`` of them and how many more."""
    shown = ", ".join(repr(e) for e in entries[:most])
    return shown + (f" and {len(entries) - most} more" if len(entries) > most else "")


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False
