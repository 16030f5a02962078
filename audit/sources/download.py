"""Hash-verified download of one pinned file into a cache folder, through pooch.

:func:`fetch` is the one download path of the package: :mod:`pooch` streams the
file to a temporary name in the cache folder and moves it into place only once
its sha256 is the pinned one, so an interrupted, failed or corrupted download
never becomes the cached file.  A file already in the cache is verified, never
silently replaced.  The caller names the errors to raise, so each source keeps
its own messages and error classes; :func:`short_reason` gives them the cause
of a failed download in a few words (never the library's traceback text).
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import socket
from collections.abc import Callable
from pathlib import Path

from audit.config import import_pooch
from audit.validation import PathLike, validate_params

#: Seconds to wait for the server to answer or send the next block.
TIMEOUT = 60


@validate_params(path=PathLike())
def sha256sum(path: str | os.PathLike) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


#: The causes of a failed download, in a few words (:func:`short_reason`).
REASONS = {
    "dns": "the host name could not be resolved: no network, or no DNS",
    "refused": "the connection was refused",
    "unreachable": "the network or host is unreachable",
    "timeout": f"no answer within {TIMEOUT} s",
    "tls": "the secure connection (TLS) failed",
    "proxy": "the proxy failed",
}
_HTTP = "HTTP {status} {reason}"


def _causes(error: BaseException):
    """``error`` and every exception behind it: causes, contexts and urllib3's ``reason``."""
    seen: set[int] = set()
    todo = [error]
    while todo:
        current = todo.pop(0)
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        reason = getattr(current, "reason", None)
        todo += [current.__cause__, current.__context__]
        todo += [reason] if isinstance(reason, BaseException) else []
        todo += [a for a in getattr(current, "args", ()) if isinstance(a, BaseException)]


def short_reason(error: BaseException) -> str:
    """Why a download failed, in a few words: the kind of failure, not the text of the
    exceptions (a requests ``ConnectionError`` prints a whole urllib3 chain).

    >>> import requests
    >>> short_reason(requests.ConnectionError(socket.gaierror(-2, "Name or service not known")))
    'the host name could not be resolved: no network, or no DNS'
    >>> short_reason(TimeoutError())
    'no answer within 60 s'
    """
    import requests  # (imported where a download is made: not by every command)

    causes = list(_causes(error))
    for cause in causes:
        response = getattr(cause, "response", None)
        if isinstance(cause, requests.HTTPError) and response is not None:
            return _HTTP.format(status=response.status_code, reason=response.reason or "").strip()
    kinds = [
        ("dns", (socket.gaierror,)),
        ("refused", (ConnectionRefusedError,)),
        ("timeout", (TimeoutError, requests.Timeout)),
        ("tls", (requests.exceptions.SSLError,)),
        ("proxy", (requests.exceptions.ProxyError,)),
    ]
    for key, classes in kinds:
        if any(isinstance(cause, classes) for cause in causes):
            return REASONS[key]
    if any(type(c).__name__ == "NameResolutionError" for c in causes):
        return REASONS["dns"]
    for cause in causes:
        if isinstance(cause, OSError) and cause.errno is not None and cause.strerror:
            if cause.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
                return REASONS["unreachable"]
            return cause.strerror[:1].lower() + cause.strerror[1:]
    return type(error).__name__


def fetch(
    url: str,
    *,
    folder: str | os.PathLike,
    filename: str,
    sha256: str,
    failed: Callable[[Exception], Exception],
    mismatch: Callable[[str, str], Exception],
) -> Path:
    """Download ``url`` once into ``folder / filename``, verified by ``sha256``.

    Parameters
    ----------
    url
        An ``http(s)`` address.
    folder, filename
        Where the verified file is kept (the folder is created if needed).
    sha256
        The pinned hex digest.
    failed
        Builds the error raised when the download fails (no network, an HTTP
        error, a timeout), from the underlying exception.
    mismatch
        Builds the error raised when a file's sha256 is not ``sha256``, from the
        file's location (the cached path, or ``url`` for a download) and its
        actual digest.

    Returns
    -------
    pathlib.Path
        The cached file, verified.
    """
    target = Path(folder) / filename
    if target.is_file():
        actual = sha256sum(target)
        if actual != sha256:
            raise mismatch(str(target), actual)
        return target
    import requests

    # stream=False: the body is read whole, so even an error response closes its socket
    pooch = import_pooch()
    http = pooch.HTTPDownloader(progressbar=False, timeout=TIMEOUT, stream=False)

    def download(address: str, output_file: str, instance) -> None:
        try:
            http(address, output_file, instance)
        except (requests.RequestException, OSError) as error:
            raise failed(error) from error
        actual = sha256sum(output_file)
        if actual != sha256:  # pooch would refuse it too; this names the digest found
            raise mismatch(address, actual)

    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(logging.WARNING)  # not pooch's "Downloading data from ... to file ..."
    try:
        return Path(
            pooch.retrieve(
                url, known_hash=f"sha256:{sha256}", fname=filename, path=folder, downloader=download
            )
        )
    finally:
        logger.setLevel(level)
