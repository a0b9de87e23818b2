"""Where a dataset lives: a local folder, or an object store through pyarrow filesystems.

Contract: ``storage_for(target)`` returns a ``Storage`` whose methods take paths relative to
the dataset root. Part files are written once under unique names and never renamed, so the
only step that must be atomic is replacing the manifest: ``os.replace`` locally, a single
object PUT on an object store. ``lock()`` keeps two drivers from committing at once (a
file lock locally; object stores are not locked, so run one driver per dataset there).
Every relative path is checked to stay under the root before it is read, written, listed
or deleted (``..``, absolute paths and, locally, symbolic links out of the root are refused
with ``BadInputError``); ``list_files`` never descends through a link.
"""
from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from ..errors import BadInputError
from .manifest import inside_root


def storage_for(target: str) -> "Storage":
    if "://" in target and not target.startswith("file://"):
        return ArrowStorage(target)
    return LocalStorage(Path(target.removeprefix("file://")))


class Storage:
    """Interface shared by both kinds of dataset root."""

    def read_text(self, rel: str) -> str | None: ...
    def write_text_atomic(self, rel: str, text: str) -> None: ...
    def put_file(self, local: Path, rel: str) -> None: ...
    def list_files(self, rel_dir: str) -> list[str]: ...
    def delete(self, rel: str) -> None: ...
    def remove_tree(self, rel_dir: str) -> None: ...
    def uri(self, rel: str) -> str: ...
    def lock(self): ...


def _outside(where: str, rel: str) -> BadInputError:
    return BadInputError(f"{where}: {str(rel)[:200]!r} is outside the dataset; nothing was read or deleted")


class LocalStorage(Storage):
    def __init__(self, root: Path):
        self.root = root.expanduser().resolve()

    def _path(self, rel: str) -> Path:
        """``root/rel`` once checked: by its text, then with every link on its way resolved
        (a folder of the dataset replaced by a link to elsewhere is refused too)."""
        if not inside_root(rel):
            raise _outside(str(self.root), rel)
        p = self.root / rel
        if not p.resolve().is_relative_to(self.root):
            raise _outside(str(self.root), rel)
        return p

    def read_text(self, rel: str) -> str | None:
        p = self._path(rel)
        return p.read_text(encoding="utf-8") if p.is_file() else None

    def write_text_atomic(self, rel: str, text: str) -> None:
        p = self._path(rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)  # readers see the old manifest or the new one, never a mix

    def put_file(self, local: Path, rel: str) -> None:
        dest = self._path(rel)
        dest.parent.mkdir(parents=True, exist_ok=True)
        if local.resolve() != dest:
            shutil.move(str(local), dest)

    def list_files(self, rel_dir: str) -> list[str]:
        base = self._path(rel_dir)
        if base.is_symlink() or not base.is_dir():
            return []
        out = []
        for folder, _dirs, names in os.walk(base, followlinks=False):  # a linked folder is not entered
            out += [os.path.join(folder, n) for n in names if not os.path.islink(os.path.join(folder, n))]
        return sorted(str(Path(p).relative_to(self.root)) for p in out)

    def delete(self, rel: str) -> None:
        p = self._path(rel)
        with contextlib.suppress(FileNotFoundError):
            p.unlink()

    def remove_tree(self, rel_dir: str) -> None:
        p = self._path(rel_dir)
        if p.is_symlink():
            raise _outside(str(self.root), rel_dir)
        shutil.rmtree(p, ignore_errors=True)

    def uri(self, rel: str) -> str:
        return str(self.root / rel) if rel == "" else str(self._path(rel))

    @contextlib.contextmanager
    def lock(self):
        import fcntl

        from ..private import narrow_umask

        narrow_umask()  # the dataset's folders, parts and manifest: owner-only (private.py)
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / "_logsleuth.lock", "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)


class ArrowStorage(Storage):
    """An object store (s3://, gs://, abfs://, hdfs://) through ``pyarrow.fs``."""

    def __init__(self, target: str):
        from pyarrow import fs

        self.fs, self.base = fs.FileSystem.from_uri(target)
        self.target = target.rstrip("/")

    def _path(self, rel: str) -> str:
        if not inside_root(rel):
            raise _outside(self.target, rel)
        return f"{self.base.rstrip('/')}/{rel}"

    def read_text(self, rel: str) -> str | None:
        from pyarrow import fs

        if self.fs.get_file_info(self._path(rel)).type != fs.FileType.File:
            return None
        with self.fs.open_input_stream(self._path(rel)) as fh:
            return fh.read().decode("utf-8")

    def write_text_atomic(self, rel: str, text: str) -> None:
        with self.fs.open_output_stream(self._path(rel)) as fh:  # one PUT: atomic on object stores
            fh.write(text.encode("utf-8"))

    def put_file(self, local: Path, rel: str) -> None:
        from pyarrow import fs

        fs.copy_files(str(local), self._path(rel), destination_filesystem=self.fs)
        local.unlink()

    def list_files(self, rel_dir: str) -> list[str]:
        from pyarrow import fs

        sel = fs.FileSelector(self._path(rel_dir), recursive=True, allow_not_found=True)
        prefix = self.base.rstrip("/") + "/"
        return sorted(i.path.removeprefix(prefix) for i in self.fs.get_file_info(sel) if i.type == fs.FileType.File)

    def delete(self, rel: str) -> None:
        with contextlib.suppress(FileNotFoundError, OSError):
            self.fs.delete_file(self._path(rel))

    def remove_tree(self, rel_dir: str) -> None:
        with contextlib.suppress(FileNotFoundError, OSError):
            self.fs.delete_dir(self._path(rel_dir))

    def uri(self, rel: str) -> str:
        if rel and not inside_root(rel):
            raise _outside(self.target, rel)
        return f"{self.target}/{rel}"

    @contextlib.contextmanager
    def lock(self):
        yield
