"""The API's JSON shapes as dataclasses: generated from serve/openapi.json by
tools/gen_models.py (do not edit by hand). Each class's `from_json` takes the decoded
JSON, ignores keys it does not know (the API only ever adds fields) and keeps the whole
object in `raw`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


def _decode(how, value):
    if value is None or how is None:
        return value
    kind, cls = how
    cls = _CLASSES[cls]
    if kind == "one":
        return cls.from_json(value) if isinstance(value, dict) else value
    if kind == "list":
        return [cls.from_json(v) if isinstance(v, dict) else v for v in value]
    return {k: cls.from_json(v) if isinstance(v, dict) else v for k, v in value.items()}


@dataclass
class Applied:
    """`Applied`: What applying a patch did, or with `check` would do (all files or none).."""

    after: Optional[str] = field(metadata={"json": "after"})
    applied: bool = field(metadata={"json": "applied"})
    before: Optional[str] = field(metadata={"json": "before"})
    check: bool = field(metadata={"json": "check"})
    files: List[AppliedFile] = field(metadata={"json": "files"})
    op: Optional[int] = field(metadata={"json": "op"})
    resumed: bool = field(metadata={"json": "resumed"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'files': ('list', 'AppliedFile')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Applied":
        """Builds a `Applied` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class AppliedFile:
    """`AppliedFile`: A file a patch changed (or, with `check`, would change), and where each hunk went.."""

    action: str = field(metadata={"json": "action"})
    conflicts: int = field(metadata={"json": "conflicts"})
    hunks: List[AppliedHunk] = field(metadata={"json": "hunks"})
    merged: bool = field(metadata={"json": "merged"})
    path: str = field(metadata={"json": "path"})
    old_path: Optional[str] = field(default=None, metadata={"json": "old_path"})
    old_path_bytes: Optional[str] = field(default=None, metadata={"json": "old_path_bytes"})
    path_bytes: Optional[str] = field(default=None, metadata={"json": "path_bytes"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'hunks': ('list', 'AppliedHunk')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "AppliedFile":
        """Builds a `AppliedFile` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class AppliedHunk:
    """`AppliedHunk`: Where one hunk of a file's patch went.."""

    fuzz: int = field(metadata={"json": "fuzz"})
    hunk: int = field(metadata={"json": "hunk"})
    offset: int = field(metadata={"json": "offset"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "AppliedHunk":
        """Builds a `AppliedHunk` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Artifact:
    """`Artifact`: One artifact (`artifact ls --json`'s row).."""

    created: str = field(metadata={"json": "created"})
    created_ns: int = field(metadata={"json": "created_ns"})
    id: str = field(metadata={"json": "id"})
    key: str = field(metadata={"json": "key"})
    meta: Dict[str, str] = field(metadata={"json": "meta"})
    size: int = field(metadata={"json": "size"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Artifact":
        """Builds a `Artifact` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class ArtifactRemoved:
    """`ArtifactRemoved`: An artifact removed (`artifact rm --json`, the API's `DELETE`).."""

    removed: str = field(metadata={"json": "removed"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "ArtifactRemoved":
        """Builds a `ArtifactRemoved` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class ArtifactStored:
    """`ArtifactStored`: What putting an artifact stored (`artifact put --json`).."""

    created: str = field(metadata={"json": "created"})
    created_ns: int = field(metadata={"json": "created_ns"})
    id: str = field(metadata={"json": "id"})
    key: str = field(metadata={"json": "key"})
    meta: Dict[str, str] = field(metadata={"json": "meta"})
    new_chunks: int = field(metadata={"json": "new_chunks"})
    replaced: bool = field(metadata={"json": "replaced"})
    size: int = field(metadata={"json": "size"})
    stored_bytes: int = field(metadata={"json": "stored_bytes"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "ArtifactStored":
        """Builds a `ArtifactStored` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Change:
    """`Change`: A changed path (`diff --json`'s file, `status --json`'s change).."""

    new: Optional[Side] = field(metadata={"json": "new"})
    old: Optional[Side] = field(metadata={"json": "old"})
    path: str = field(metadata={"json": "path"})
    status: str = field(metadata={"json": "status"})
    binary: Optional[bool] = field(default=None, metadata={"json": "binary"})
    deletions: Optional[int] = field(default=None, metadata={"json": "deletions"})
    diff_timed_out: Optional[bool] = field(default=None, metadata={"json": "diff_timed_out"})
    hunks: Optional[List[Hunk]] = field(default=None, metadata={"json": "hunks"})
    insertions: Optional[int] = field(default=None, metadata={"json": "insertions"})
    old_path: Optional[str] = field(default=None, metadata={"json": "old_path"})
    old_path_bytes: Optional[str] = field(default=None, metadata={"json": "old_path_bytes"})
    path_bytes: Optional[str] = field(default=None, metadata={"json": "path_bytes"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'new': ('one', 'Side'), 'old': ('one', 'Side'), 'hunks': ('list', 'Hunk')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Change":
        """Builds a `Change` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Changes:
    """`Changes`: The changes between two points (`diff --json`).."""

    files: List[Change] = field(metadata={"json": "files"})
    new: str = field(metadata={"json": "new"})
    old: str = field(metadata={"json": "old"})
    totals: Totals = field(metadata={"json": "totals"})
    patch: Optional[str] = field(default=None, metadata={"json": "patch"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'files': ('list', 'Change'), 'totals': ('one', 'Totals')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Changes":
        """Builds a `Changes` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Contract:
    """`Contract`: which paths a run may change (the contract file's fields)."""

    allow: Optional[List[str]] = field(default=None, metadata={"json": "allow"})
    forbid: Optional[List[str]] = field(default=None, metadata={"json": "forbid"})
    no_new_files: Optional[bool] = field(default=None, metadata={"json": "no_new_files"})
    on_violation: Optional[str] = field(default=None, metadata={"json": "on_violation"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Contract":
        """Builds a `Contract` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class EditedFile:
    """`EditedFile`: A file an edit by hunk changed (`apply`/`revert --json`'s file row).."""

    action: str = field(metadata={"json": "action"})
    conflicts: int = field(metadata={"json": "conflicts"})
    merged: bool = field(metadata={"json": "merged"})
    path: str = field(metadata={"json": "path"})
    old_path: Optional[str] = field(default=None, metadata={"json": "old_path"})
    old_path_bytes: Optional[str] = field(default=None, metadata={"json": "old_path_bytes"})
    path_bytes: Optional[str] = field(default=None, metadata={"json": "path_bytes"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "EditedFile":
        """Builds a `EditedFile` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Error:
    """`Error`: A failure (the `--json` error object of the CLI, the body of the API's error answers).."""

    causes: List[str] = field(metadata={"json": "causes"})
    code: str = field(metadata={"json": "code"})
    error: str = field(metadata={"json": "error"})
    hints: List[str] = field(metadata={"json": "hints"})
    kind: str = field(metadata={"json": "kind"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Error":
        """Builds a `Error` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Health:
    """`Health`: That the server answers, which version it is and which store it serves.."""

    ok: bool = field(metadata={"json": "ok"})
    store: str = field(metadata={"json": "store"})
    version: str = field(metadata={"json": "version"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Health":
        """Builds a `Health` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Hunk:
    """`Hunk`: One hunk of a text change, with the id that selects it (restore, revert and an overlay's
accept and reject take these ids).."""

    id: str = field(metadata={"json": "id"})
    lines: List[str] = field(metadata={"json": "lines"})
    new_lines: int = field(metadata={"json": "new_lines"})
    new_start: int = field(metadata={"json": "new_start"})
    old_lines: int = field(metadata={"json": "old_lines"})
    old_start: int = field(metadata={"json": "old_start"})
    pending: bool = field(metadata={"json": "pending"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Hunk":
        """Builds a `Hunk` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class LogEntry:
    """`LogEntry`: A row of the log (`log --json`, the API's snapshot list).."""

    bytes: int = field(metadata={"json": "bytes"})
    dirs: int = field(metadata={"json": "dirs"})
    files: int = field(metadata={"json": "files"})
    id: str = field(metadata={"json": "id"})
    ignore_globs: List[str] = field(metadata={"json": "ignore_globs"})
    max_file_size: Optional[int] = field(metadata={"json": "max_file_size"})
    message: str = field(metadata={"json": "message"})
    meta: Dict[str, str] = field(metadata={"json": "meta"})
    parent: Optional[str] = field(metadata={"json": "parent"})
    restored: bool = field(metadata={"json": "restored"})
    root: str = field(metadata={"json": "root"})
    short_id: str = field(metadata={"json": "short_id"})
    skipped: List[Skipped] = field(metadata={"json": "skipped"})
    symlinks: int = field(metadata={"json": "symlinks"})
    tags: List[str] = field(metadata={"json": "tags"})
    time: str = field(metadata={"json": "time"})
    time_ns: int = field(metadata={"json": "time_ns"})
    workspace: str = field(metadata={"json": "workspace"})
    workspace_id: int = field(metadata={"json": "workspace_id"})
    change: Optional[PathChange] = field(default=None, metadata={"json": "change"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'skipped': ('list', 'Skipped'), 'change': ('one', 'PathChange')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "LogEntry":
        """Builds a `LogEntry` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Op:
    """`Op`: One action of the operation log (`op log --json`'s row).."""

    actor: Optional[str] = field(metadata={"json": "actor"})
    after: Optional[str] = field(metadata={"json": "after"})
    before: Optional[str] = field(metadata={"json": "before"})
    changed_workspace: bool = field(metadata={"json": "changed_workspace"})
    command: List[str] = field(metadata={"json": "command"})
    folded: List[int] = field(metadata={"json": "folded"})
    id: int = field(metadata={"json": "id"})
    kind: str = field(metadata={"json": "kind"})
    reverses: Optional[int] = field(metadata={"json": "reverses"})
    target: Optional[str] = field(metadata={"json": "target"})
    time: str = field(metadata={"json": "time"})
    time_ns: int = field(metadata={"json": "time_ns"})
    undone: bool = field(metadata={"json": "undone"})
    workspace: str = field(metadata={"json": "workspace"})
    workspace_id: Optional[int] = field(metadata={"json": "workspace_id"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Op":
        """Builds a `Op` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Overlay:
    """`Overlay`: One overlay (`overlay list --json`'s row).."""

    backend: str = field(metadata={"json": "backend"})
    base: str = field(metadata={"json": "base"})
    created: str = field(metadata={"json": "created"})
    created_ns: int = field(metadata={"json": "created_ns"})
    id: int = field(metadata={"json": "id"})
    ignored: List[str] = field(metadata={"json": "ignored"})
    name: Optional[str] = field(metadata={"json": "name"})
    path: Optional[str] = field(metadata={"json": "path"})
    pending: Optional[int] = field(metadata={"json": "pending"})
    running: bool = field(metadata={"json": "running"})
    state: Optional[str] = field(metadata={"json": "state"})
    workspace: str = field(metadata={"json": "workspace"})
    workspace_id: Optional[int] = field(metadata={"json": "workspace_id"})
    ignored_bytes: Optional[List[Optional[str]]] = field(default=None, metadata={"json": "ignored_bytes"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Overlay":
        """Builds a `Overlay` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class OverlayAccept:
    """`OverlayAccept`: What accepting (some of) an overlay's changes did to the workspace.."""

    after: Optional[str] = field(metadata={"json": "after"})
    before: Optional[str] = field(metadata={"json": "before"})
    conflicts: List[OverlayConflict] = field(metadata={"json": "conflicts"})
    files: List[EditedFile] = field(metadata={"json": "files"})
    ignored: List[str] = field(metadata={"json": "ignored"})
    ignored_copied: List[str] = field(metadata={"json": "ignored_copied"})
    ignored_files: int = field(metadata={"json": "ignored_files"})
    op: Optional[int] = field(metadata={"json": "op"})
    overlay: int = field(metadata={"json": "overlay"})
    ignored_bytes: Optional[List[Optional[str]]] = field(default=None, metadata={"json": "ignored_bytes"})
    ignored_copied_bytes: Optional[List[Optional[str]]] = field(default=None, metadata={"json": "ignored_copied_bytes"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'conflicts': ('list', 'OverlayConflict'), 'files': ('list', 'EditedFile')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "OverlayAccept":
        """Builds a `OverlayAccept` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class OverlayConflict:
    """`OverlayConflict`: A conflict an accept left pending.."""

    path: str = field(metadata={"json": "path"})
    regions: int = field(metadata={"json": "regions"})
    why: str = field(metadata={"json": "why"})
    path_bytes: Optional[str] = field(default=None, metadata={"json": "path_bytes"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "OverlayConflict":
        """Builds a `OverlayConflict` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class OverlayCreated:
    """`OverlayCreated`: What creating an overlay made: the overlay, and how.."""

    backend: str = field(metadata={"json": "backend"})
    base: str = field(metadata={"json": "base"})
    created: str = field(metadata={"json": "created"})
    created_ns: int = field(metadata={"json": "created_ns"})
    fallback: Optional[str] = field(metadata={"json": "fallback"})
    files_copied: int = field(metadata={"json": "files_copied"})
    id: int = field(metadata={"json": "id"})
    ignored: List[str] = field(metadata={"json": "ignored"})
    name: Optional[str] = field(metadata={"json": "name"})
    path: Optional[str] = field(metadata={"json": "path"})
    pending: Optional[int] = field(metadata={"json": "pending"})
    running: bool = field(metadata={"json": "running"})
    seconds: float = field(metadata={"json": "seconds"})
    state: Optional[str] = field(metadata={"json": "state"})
    workspace: str = field(metadata={"json": "workspace"})
    workspace_id: Optional[int] = field(metadata={"json": "workspace_id"})
    ignored_bytes: Optional[List[Optional[str]]] = field(default=None, metadata={"json": "ignored_bytes"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "OverlayCreated":
        """Builds a `OverlayCreated` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class OverlayDiff:
    """`OverlayDiff`: An overlay's pending changes, each text change with hunk ids that accept and reject take.."""

    files: List[Change] = field(metadata={"json": "files"})
    ignored: List[str] = field(metadata={"json": "ignored"})
    new: str = field(metadata={"json": "new"})
    old: str = field(metadata={"json": "old"})
    overlay: int = field(metadata={"json": "overlay"})
    totals: Totals = field(metadata={"json": "totals"})
    ignored_bytes: Optional[List[Optional[str]]] = field(default=None, metadata={"json": "ignored_bytes"})
    patch: Optional[str] = field(default=None, metadata={"json": "patch"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'files': ('list', 'Change'), 'totals': ('one', 'Totals')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "OverlayDiff":
        """Builds a `OverlayDiff` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class OverlayDropped:
    """`OverlayDropped`: What dropping an overlay did (`overlay drop --json`, the API's `DELETE`).."""

    dropped: int = field(metadata={"json": "dropped"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "OverlayDropped":
        """Builds a `OverlayDropped` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class OverlayReject:
    """`OverlayReject`: What rejecting (some of) an overlay's changes did: those paths are back at the base inside
the overlay; the workspace is untouched.."""

    op: Optional[int] = field(metadata={"json": "op"})
    overlay: int = field(metadata={"json": "overlay"})
    rejected: List[str] = field(metadata={"json": "rejected"})
    rejected_bytes: Optional[List[Optional[str]]] = field(default=None, metadata={"json": "rejected_bytes"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "OverlayReject":
        """Builds a `OverlayReject` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class OverlayRunChanges:
    """`OverlayRunChanges`: One run's pending changes.."""

    after: Optional[str] = field(metadata={"json": "after"})
    before: Optional[str] = field(metadata={"json": "before"})
    command: Optional[str] = field(metadata={"json": "command"})
    files: List[OverlayRunFile] = field(metadata={"json": "files"})
    finished: Optional[str] = field(metadata={"json": "finished"})
    run: Optional[int] = field(metadata={"json": "run"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'files': ('list', 'OverlayRunFile')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "OverlayRunChanges":
        """Builds a `OverlayRunChanges` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class OverlayRunFile:
    """`OverlayRunFile`: One file's part of a run's changes.."""

    hunks: Optional[List[Hunk]] = field(metadata={"json": "hunks"})
    path: str = field(metadata={"json": "path"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'hunks': ('list', 'Hunk')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "OverlayRunFile":
        """Builds a `OverlayRunFile` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class OverlayRuns:
    """`OverlayRuns`: An overlay's pending changes grouped by the command run that made them
(`overlay diff --by-run`): each group's hunk ids are what `--run N` takes.."""

    overlay: int = field(metadata={"json": "overlay"})
    runs: List[OverlayRunChanges] = field(metadata={"json": "runs"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'runs': ('list', 'OverlayRunChanges')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "OverlayRuns":
        """Builds a `OverlayRuns` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class OverlaySnapshot:
    """`OverlaySnapshot`: A checkpoint of an overlay's state.."""

    overlay: int = field(metadata={"json": "overlay"})
    snapshot: Snapshot = field(metadata={"json": "snapshot"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'snapshot': ('one', 'Snapshot')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "OverlaySnapshot":
        """Builds a `OverlaySnapshot` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class OverlaySplit:
    """`OverlaySplit`: A pending hunk of an overlay cut at the unchanged lines between its runs of changes;
accept and reject take each part's id like a hunk's.."""

    hunk: str = field(metadata={"json": "hunk"})
    overlay: int = field(metadata={"json": "overlay"})
    parts: List[Hunk] = field(metadata={"json": "parts"})
    path: str = field(metadata={"json": "path"})
    path_bytes: Optional[str] = field(default=None, metadata={"json": "path_bytes"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'parts': ('list', 'Hunk')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "OverlaySplit":
        """Builds a `OverlaySplit` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class PathChange:
    """`PathChange`: How the path a log was asked about changed in one snapshot.."""

    path: str = field(metadata={"json": "path"})
    status: str = field(metadata={"json": "status"})
    old_path: Optional[str] = field(default=None, metadata={"json": "old_path"})
    old_path_bytes: Optional[str] = field(default=None, metadata={"json": "old_path_bytes"})
    path_bytes: Optional[str] = field(default=None, metadata={"json": "path_bytes"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "PathChange":
        """Builds a `PathChange` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class PlanEntry:
    """`PlanEntry`: One path a restore writes or removes (`restore --json`'s plan row).."""

    action: str = field(metadata={"json": "action"})
    kind: str = field(metadata={"json": "kind"})
    path: str = field(metadata={"json": "path"})
    status: str = field(metadata={"json": "status"})
    path_bytes: Optional[str] = field(default=None, metadata={"json": "path_bytes"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "PlanEntry":
        """Builds a `PlanEntry` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class RangeRunChanges:
    """`RangeRunChanges`: One unit's part of the change.."""

    files: List[OverlayRunFile] = field(metadata={"json": "files"})
    run: Optional[int] = field(metadata={"json": "run"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'files': ('list', 'OverlayRunFile')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "RangeRunChanges":
        """Builds a `RangeRunChanges` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class RangeRuns:
    """`RangeRuns`: A..B's change, grouped by unit: each group's hunk ids are what `revert A B --run N` takes.."""

    a: str = field(metadata={"json": "a"})
    b: str = field(metadata={"json": "b"})
    runs: List[RangeRunChanges] = field(metadata={"json": "runs"})
    units: List[RangeUnit] = field(metadata={"json": "units"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'runs': ('list', 'RangeRunChanges'), 'units': ('list', 'RangeUnit')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "RangeRuns":
        """Builds a `RangeRuns` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class RangeUnit:
    """`RangeUnit`: One run or tool call between the two snapshots.."""

    after: str = field(metadata={"json": "after"})
    before: str = field(metadata={"json": "before"})
    message: str = field(metadata={"json": "message"})
    meta: Dict[str, str] = field(metadata={"json": "meta"})
    run: int = field(metadata={"json": "run"})
    short_id: str = field(metadata={"json": "short_id"})
    time: str = field(metadata={"json": "time"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "RangeUnit":
        """Builds a `RangeUnit` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Restore:
    """`Restore`: What a restore did, or with `dry_run` would do (`restore --json`).."""

    after: Optional[str] = field(metadata={"json": "after"})
    before: Optional[str] = field(metadata={"json": "before"})
    bytes_written: int = field(metadata={"json": "bytes_written"})
    creates: int = field(metadata={"json": "creates"})
    deleted: int = field(metadata={"json": "deleted"})
    deletes: int = field(metadata={"json": "deletes"})
    dry_run: bool = field(metadata={"json": "dry_run"})
    edited: List[EditedFile] = field(metadata={"json": "edited"})
    kept: List[str] = field(metadata={"json": "kept"})
    op: Optional[int] = field(metadata={"json": "op"})
    overwrites: int = field(metadata={"json": "overwrites"})
    plan: List[PlanEntry] = field(metadata={"json": "plan"})
    seconds: float = field(metadata={"json": "seconds"})
    symlinks_written: int = field(metadata={"json": "symlinks_written"})
    target: str = field(metadata={"json": "target"})
    workspace: str = field(metadata={"json": "workspace"})
    written: int = field(metadata={"json": "written"})
    kept_bytes: Optional[List[Optional[str]]] = field(default=None, metadata={"json": "kept_bytes"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'edited': ('list', 'EditedFile'), 'plan': ('list', 'PlanEntry')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Restore":
        """Builds a `Restore` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Revert:
    """`Revert`: What a revert did, or with `dry_run` would do (`revert --json`; the `revert` tool): the
files written, and the conflicts that stopped it (then nothing was written).."""

    after: Optional[str] = field(metadata={"json": "after"})
    before: Optional[str] = field(metadata={"json": "before"})
    conflicts: List[OverlayConflict] = field(metadata={"json": "conflicts"})
    dry_run: bool = field(metadata={"json": "dry_run"})
    files: List[EditedFile] = field(metadata={"json": "files"})
    op: Optional[int] = field(metadata={"json": "op"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'conflicts': ('list', 'OverlayConflict'), 'files': ('list', 'EditedFile')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Revert":
        """Builds a `Revert` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class RunDiff:
    """`RunDiff`: What a run changed.."""

    deletions: int = field(metadata={"json": "deletions"})
    files: List[RunFile] = field(metadata={"json": "files"})
    files_changed: int = field(metadata={"json": "files_changed"})
    insertions: int = field(metadata={"json": "insertions"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'files': ('list', 'RunFile')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "RunDiff":
        """Builds a `RunDiff` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class RunFile:
    """`RunFile`: One changed file of a run.."""

    binary: bool = field(metadata={"json": "binary"})
    deletions: int = field(metadata={"json": "deletions"})
    insertions: int = field(metadata={"json": "insertions"})
    new: Optional[Side] = field(metadata={"json": "new"})
    old: Optional[Side] = field(metadata={"json": "old"})
    old_path: Optional[str] = field(metadata={"json": "old_path"})
    old_path_bytes: Optional[str] = field(metadata={"json": "old_path_bytes"})
    path: str = field(metadata={"json": "path"})
    path_bytes: Optional[str] = field(metadata={"json": "path_bytes"})
    status: str = field(metadata={"json": "status"})
    hunks: Optional[List[Hunk]] = field(default=None, metadata={"json": "hunks"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'new': ('one', 'Side'), 'old': ('one', 'Side'), 'hunks': ('list', 'Hunk')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "RunFile":
        """Builds a `RunFile` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class RunOverlay:
    """`RunOverlay`: `run --isolate`: the overlay and what became of its changes.."""

    accept_op: Optional[int] = field(metadata={"json": "accept_op"})
    accepted: bool = field(metadata={"json": "accepted"})
    backend: str = field(metadata={"json": "backend"})
    conflicts: List[str] = field(metadata={"json": "conflicts"})
    fallback: Optional[str] = field(metadata={"json": "fallback"})
    id: int = field(metadata={"json": "id"})
    kept: bool = field(metadata={"json": "kept"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "RunOverlay":
        """Builds a `RunOverlay` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class RunResult:
    """`RunResult`: The object `rewind run --json` prints on stdout (or `--result FILE` writes) after the
command ends (its JSON Schema: schemas/run-result.schema.json). Every key is always present;
null where it does not apply.."""

    after: str = field(metadata={"json": "after"})
    after_label: str = field(metadata={"json": "after_label"})
    backend: str = field(metadata={"json": "backend"})
    before: str = field(metadata={"json": "before"})
    command: List[str] = field(metadata={"json": "command"})
    cwd: str = field(metadata={"json": "cwd"})
    diff: RunDiff = field(metadata={"json": "diff"})
    duration_seconds: float = field(metadata={"json": "duration_seconds"})
    exit_code: Optional[int] = field(metadata={"json": "exit_code"})
    exit_reason: str = field(metadata={"json": "exit_reason"})
    on_violation: str = field(metadata={"json": "on_violation"})
    op: int = field(metadata={"json": "op"})
    overlay: Optional[RunOverlay] = field(metadata={"json": "overlay"})
    patch: Optional[str] = field(metadata={"json": "patch"})
    patch_bytes: Optional[int] = field(metadata={"json": "patch_bytes"})
    patch_ref: Optional[str] = field(metadata={"json": "patch_ref"})
    restore_op: Optional[int] = field(metadata={"json": "restore_op"})
    retention: RunRetention = field(metadata={"json": "retention"})
    reverted: List[str] = field(metadata={"json": "reverted"})
    rewind_exit_code: int = field(metadata={"json": "rewind_exit_code"})
    rolled_back: bool = field(metadata={"json": "rolled_back"})
    signal: Optional[int] = field(metadata={"json": "signal"})
    signal_name: Optional[str] = field(metadata={"json": "signal_name"})
    skipped: List[RunSkipped] = field(metadata={"json": "skipped"})
    spawn_error: Optional[str] = field(metadata={"json": "spawn_error"})
    success: bool = field(metadata={"json": "success"})
    total_seconds: float = field(metadata={"json": "total_seconds"})
    version: int = field(metadata={"json": "version"})
    violations: List[RunViolation] = field(metadata={"json": "violations"})
    workspace: str = field(metadata={"json": "workspace"})
    scratch: Optional[RunScratch] = field(default=None, metadata={"json": "scratch"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'diff': ('one', 'RunDiff'), 'overlay': ('one', 'RunOverlay'), 'retention': ('one', 'RunRetention'), 'skipped': ('list', 'RunSkipped'), 'violations': ('list', 'RunViolation'), 'scratch': ('one', 'RunScratch')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "RunResult":
        """Builds a `RunResult` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class RunRetention:
    """`RunRetention`: The store's run retention, applied after the run (config.toml `[retention]`); it never
fails the run.."""

    error: Optional[str] = field(metadata={"json": "error"})
    forgotten: int = field(metadata={"json": "forgotten"})
    gc: bool = field(metadata={"json": "gc"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "RunRetention":
        """Builds a `RunRetention` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class RunScratch:
    """`RunScratch`: With `--scratch` only: the scratch directory the command saw (`$REWIND_SCRATCH`, removed
now) and the artifact key prefix its files are kept under (`rewind scratch ls/cat RUN`).."""

    bytes: int = field(metadata={"json": "bytes"})
    dir: str = field(metadata={"json": "dir"})
    files: int = field(metadata={"json": "files"})
    prefix: str = field(metadata={"json": "prefix"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "RunScratch":
        """Builds a `RunScratch` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class RunSkipped:
    """`RunSkipped`: A path the run's after snapshot passed over.."""

    detail: str = field(metadata={"json": "detail"})
    path: str = field(metadata={"json": "path"})
    path_bytes: Optional[str] = field(metadata={"json": "path_bytes"})
    reason: str = field(metadata={"json": "reason"})
    warn: bool = field(metadata={"json": "warn"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "RunSkipped":
        """Builds a `RunSkipped` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class RunStarted:
    """`RunStarted`: A run started in the background (status 202).."""

    run: int = field(metadata={"json": "run"})
    status: str = field(metadata={"json": "status"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "RunStarted":
        """Builds a `RunStarted` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class RunState:
    """`RunState`: A run's state: running, then its result or the error that stopped it.."""

    run: int = field(metadata={"json": "run"})
    status: str = field(metadata={"json": "status"})
    workspace: str = field(metadata={"json": "workspace"})
    error: Optional[Error] = field(default=None, metadata={"json": "error"})
    result: Optional[RunResult] = field(default=None, metadata={"json": "result"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'error': ('one', 'Error'), 'result': ('one', 'RunResult')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "RunState":
        """Builds a `RunState` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class RunViolation:
    """`RunViolation`: A path that broke the run's contract.."""

    path: str = field(metadata={"json": "path"})
    path_bytes: Optional[str] = field(metadata={"json": "path_bytes"})
    reason: str = field(metadata={"json": "reason"})
    status: str = field(metadata={"json": "status"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "RunViolation":
        """Builds a `RunViolation` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Session:
    """`Session`: One session's summary (`log --by-session --json`'s row).."""

    added: int = field(metadata={"json": "added"})
    agent: Optional[str] = field(metadata={"json": "agent"})
    changes: int = field(metadata={"json": "changes"})
    files: List[str] = field(metadata={"json": "files"})
    first: str = field(metadata={"json": "first"})
    first_time: str = field(metadata={"json": "first_time"})
    last: str = field(metadata={"json": "last"})
    last_time: str = field(metadata={"json": "last_time"})
    present: str = field(metadata={"json": "present"})
    present_lines: int = field(metadata={"json": "present_lines"})
    removed: int = field(metadata={"json": "removed"})
    session: str = field(metadata={"json": "session"})
    snapshots: int = field(metadata={"json": "snapshots"})
    files_bytes: Optional[List[Optional[str]]] = field(default=None, metadata={"json": "files_bytes"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Session":
        """Builds a `Session` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Side:
    """`Side`: One side of a change (`diff --json`'s `old` and `new`).."""

    id: str = field(metadata={"json": "id"})
    kind: str = field(metadata={"json": "kind"})
    mode: str = field(metadata={"json": "mode"})
    size: int = field(metadata={"json": "size"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Side":
        """Builds a `Side` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Skipped:
    """`Skipped`: A path a scan passed over or warned about (too large, unreadable, a special file...).."""

    detail: str = field(metadata={"json": "detail"})
    path: str = field(metadata={"json": "path"})
    reason: str = field(metadata={"json": "reason"})
    path_bytes: Optional[str] = field(default=None, metadata={"json": "path_bytes"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Skipped":
        """Builds a `Skipped` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Snapshot:
    """`Snapshot`: One snapshot (`log --json`'s row, `show --json` without the scan settings).."""

    bytes: int = field(metadata={"json": "bytes"})
    dirs: int = field(metadata={"json": "dirs"})
    files: int = field(metadata={"json": "files"})
    id: str = field(metadata={"json": "id"})
    message: str = field(metadata={"json": "message"})
    meta: Dict[str, str] = field(metadata={"json": "meta"})
    parent: Optional[str] = field(metadata={"json": "parent"})
    root: str = field(metadata={"json": "root"})
    short_id: str = field(metadata={"json": "short_id"})
    symlinks: int = field(metadata={"json": "symlinks"})
    tags: List[str] = field(metadata={"json": "tags"})
    time: str = field(metadata={"json": "time"})
    time_ns: int = field(metadata={"json": "time_ns"})
    workspace: str = field(metadata={"json": "workspace"})
    workspace_id: int = field(metadata={"json": "workspace_id"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Snapshot":
        """Builds a `Snapshot` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class SnapshotShown:
    """`SnapshotShown`: One snapshot and what changed since its parent (`show --json`).."""

    bytes: int = field(metadata={"json": "bytes"})
    changes: Optional[List[Change]] = field(metadata={"json": "changes"})
    dirs: int = field(metadata={"json": "dirs"})
    files: int = field(metadata={"json": "files"})
    id: str = field(metadata={"json": "id"})
    ignore_globs: List[str] = field(metadata={"json": "ignore_globs"})
    max_file_size: Optional[int] = field(metadata={"json": "max_file_size"})
    message: str = field(metadata={"json": "message"})
    meta: Dict[str, str] = field(metadata={"json": "meta"})
    parent: Optional[str] = field(metadata={"json": "parent"})
    root: str = field(metadata={"json": "root"})
    short_id: str = field(metadata={"json": "short_id"})
    skipped: List[Skipped] = field(metadata={"json": "skipped"})
    symlinks: int = field(metadata={"json": "symlinks"})
    tags: List[str] = field(metadata={"json": "tags"})
    time: str = field(metadata={"json": "time"})
    time_ns: int = field(metadata={"json": "time_ns"})
    workspace: str = field(metadata={"json": "workspace"})
    workspace_id: int = field(metadata={"json": "workspace_id"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'changes': ('list', 'Change'), 'skipped': ('list', 'Skipped')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "SnapshotShown":
        """Builds a `SnapshotShown` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class SnapshotTaken:
    """`SnapshotTaken`: What taking a snapshot did: the snapshot as the log lists it, and the scan's figures.."""

    bytes: int = field(metadata={"json": "bytes"})
    bytes_read: int = field(metadata={"json": "bytes_read"})
    created: bool = field(metadata={"json": "created"})
    dirs: int = field(metadata={"json": "dirs"})
    dry_run: bool = field(metadata={"json": "dry_run"})
    files: int = field(metadata={"json": "files"})
    files_read: int = field(metadata={"json": "files_read"})
    id: Optional[str] = field(metadata={"json": "id"})
    new_blobs: int = field(metadata={"json": "new_blobs"})
    new_chunks: int = field(metadata={"json": "new_chunks"})
    new_trees: int = field(metadata={"json": "new_trees"})
    parent: Optional[str] = field(metadata={"json": "parent"})
    root: str = field(metadata={"json": "root"})
    seconds: float = field(metadata={"json": "seconds"})
    short_id: Optional[str] = field(metadata={"json": "short_id"})
    skipped: List[Skipped] = field(metadata={"json": "skipped"})
    snapshot: Optional[Snapshot] = field(metadata={"json": "snapshot"})
    stored_bytes: int = field(metadata={"json": "stored_bytes"})
    symlinks: int = field(metadata={"json": "symlinks"})
    unchanged: bool = field(metadata={"json": "unchanged"})
    walk: Any = field(metadata={"json": "walk"})
    workspace: str = field(metadata={"json": "workspace"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'skipped': ('list', 'Skipped'), 'snapshot': ('one', 'Snapshot')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "SnapshotTaken":
        """Builds a `SnapshotTaken` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Status:
    """`Status`: What changed in a workspace since its last snapshot (`status --json`).."""

    base: str = field(metadata={"json": "base"})
    changes: List[Change] = field(metadata={"json": "changes"})
    clean: bool = field(metadata={"json": "clean"})
    skipped: List[Skipped] = field(metadata={"json": "skipped"})
    workspace: str = field(metadata={"json": "workspace"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'changes': ('list', 'Change'), 'skipped': ('list', 'Skipped')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Status":
        """Builds a `Status` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Totals:
    """`Totals`: Totals over a diff's files.."""

    deletions: int = field(metadata={"json": "deletions"})
    files_changed: int = field(metadata={"json": "files_changed"})
    insertions: int = field(metadata={"json": "insertions"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Totals":
        """Builds a `Totals` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Tree:
    """`Tree`: A directory of a snapshot.."""

    entries: List[TreeEntry] = field(metadata={"json": "entries"})
    path: str = field(metadata={"json": "path"})
    rev: str = field(metadata={"json": "rev"})
    path_bytes: Optional[str] = field(default=None, metadata={"json": "path_bytes"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'entries': ('list', 'TreeEntry')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Tree":
        """Builds a `Tree` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class TreeEntry:
    """`TreeEntry`: One entry of a snapshot's tree.."""

    id: str = field(metadata={"json": "id"})
    kind: str = field(metadata={"json": "kind"})
    name: str = field(metadata={"json": "name"})
    path: str = field(metadata={"json": "path"})
    size: int = field(metadata={"json": "size"})
    path_bytes: Optional[str] = field(default=None, metadata={"json": "path_bytes"})
    target: Optional[str] = field(default=None, metadata={"json": "target"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "TreeEntry":
        """Builds a `TreeEntry` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Undo:
    """`Undo`: What an undo or redo did.."""

    after: Optional[str] = field(metadata={"json": "after"})
    before: Optional[str] = field(metadata={"json": "before"})
    deleted: int = field(metadata={"json": "deleted"})
    op: Optional[int] = field(metadata={"json": "op"})
    plan: List[PlanEntry] = field(metadata={"json": "plan"})
    redo: bool = field(metadata={"json": "redo"})
    undone: UndoneOp = field(metadata={"json": "undone"})
    written: int = field(metadata={"json": "written"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'plan': ('list', 'PlanEntry'), 'undone': ('one', 'UndoneOp')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Undo":
        """Builds a `Undo` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class UndoneOp:
    """`UndoneOp`: The operation an undo or redo took back.."""

    id: int = field(metadata={"json": "id"})
    kind: str = field(metadata={"json": "kind"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "UndoneOp":
        """Builds a `UndoneOp` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Workspace:
    """`Workspace`: One workspace (the API's workspace object).."""

    created_ns: int = field(metadata={"json": "created_ns"})
    head: Optional[str] = field(metadata={"json": "head"})
    id: int = field(metadata={"json": "id"})
    path: str = field(metadata={"json": "path"})
    snapshots: int = field(metadata={"json": "snapshots"})
    path_bytes: Optional[str] = field(default=None, metadata={"json": "path_bytes"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Workspace":
        """Builds a `Workspace` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class WorkspaceRegistered:
    """`WorkspaceRegistered`: The workspace a registration names, and whether it was new.."""

    created_ns: int = field(metadata={"json": "created_ns"})
    head: Optional[str] = field(metadata={"json": "head"})
    id: int = field(metadata={"json": "id"})
    newly_registered: bool = field(metadata={"json": "newly_registered"})
    path: str = field(metadata={"json": "path"})
    snapshots: int = field(metadata={"json": "snapshots"})
    store: str = field(metadata={"json": "store"})
    path_bytes: Optional[str] = field(default=None, metadata={"json": "path_bytes"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "WorkspaceRegistered":
        """Builds a `WorkspaceRegistered` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


_CLASSES = {
    "Applied": Applied,
    "AppliedFile": AppliedFile,
    "AppliedHunk": AppliedHunk,
    "Artifact": Artifact,
    "ArtifactRemoved": ArtifactRemoved,
    "ArtifactStored": ArtifactStored,
    "Change": Change,
    "Changes": Changes,
    "Contract": Contract,
    "EditedFile": EditedFile,
    "Error": Error,
    "Health": Health,
    "Hunk": Hunk,
    "LogEntry": LogEntry,
    "Op": Op,
    "Overlay": Overlay,
    "OverlayAccept": OverlayAccept,
    "OverlayConflict": OverlayConflict,
    "OverlayCreated": OverlayCreated,
    "OverlayDiff": OverlayDiff,
    "OverlayDropped": OverlayDropped,
    "OverlayReject": OverlayReject,
    "OverlayRunChanges": OverlayRunChanges,
    "OverlayRunFile": OverlayRunFile,
    "OverlayRuns": OverlayRuns,
    "OverlaySnapshot": OverlaySnapshot,
    "OverlaySplit": OverlaySplit,
    "PathChange": PathChange,
    "PlanEntry": PlanEntry,
    "RangeRunChanges": RangeRunChanges,
    "RangeRuns": RangeRuns,
    "RangeUnit": RangeUnit,
    "Restore": Restore,
    "Revert": Revert,
    "RunDiff": RunDiff,
    "RunFile": RunFile,
    "RunOverlay": RunOverlay,
    "RunResult": RunResult,
    "RunRetention": RunRetention,
    "RunScratch": RunScratch,
    "RunSkipped": RunSkipped,
    "RunStarted": RunStarted,
    "RunState": RunState,
    "RunViolation": RunViolation,
    "Session": Session,
    "Side": Side,
    "Skipped": Skipped,
    "Snapshot": Snapshot,
    "SnapshotShown": SnapshotShown,
    "SnapshotTaken": SnapshotTaken,
    "Status": Status,
    "Totals": Totals,
    "Tree": Tree,
    "TreeEntry": TreeEntry,
    "Undo": Undo,
    "UndoneOp": UndoneOp,
    "Workspace": Workspace,
    "WorkspaceRegistered": WorkspaceRegistered,
}
