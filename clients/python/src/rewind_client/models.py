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
class Error:
    """`Error`."""

    code: str = field(metadata={"json": "code"})
    error: str = field(metadata={"json": "error"})
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
class Workspace:
    """`Workspace`."""

    id: int = field(metadata={"json": "id"})
    path: str = field(metadata={"json": "path"})
    created_ns: int = field(metadata={"json": "created_ns"})
    snapshots: int = field(metadata={"json": "snapshots"})
    head: Optional[str] = field(metadata={"json": "head"})
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
class Snapshot:
    """`Snapshot`."""

    id: str = field(metadata={"json": "id"})
    short_id: str = field(metadata={"json": "short_id"})
    time: str = field(metadata={"json": "time"})
    time_ns: int = field(metadata={"json": "time_ns"})
    workspace: str = field(metadata={"json": "workspace"})
    workspace_id: int = field(metadata={"json": "workspace_id"})
    parent: Optional[str] = field(metadata={"json": "parent"})
    root: str = field(metadata={"json": "root"})
    message: str = field(metadata={"json": "message"})
    meta: Dict[str, str] = field(metadata={"json": "meta"})
    tags: List[str] = field(metadata={"json": "tags"})
    files: int = field(metadata={"json": "files"})
    dirs: int = field(metadata={"json": "dirs"})
    symlinks: int = field(metadata={"json": "symlinks"})
    bytes: int = field(metadata={"json": "bytes"})
    restored: Optional[bool] = field(default=None, metadata={"json": "restored"})
    change: Optional[Dict[str, Any]] = field(default=None, metadata={"json": "change"})
    changes: Optional[List[Any]] = field(default=None, metadata={"json": "changes"})
    skipped: Optional[int] = field(default=None, metadata={"json": "skipped"})
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
class Op:
    """`Op`."""

    id: int = field(metadata={"json": "id"})
    kind: str = field(metadata={"json": "kind"})
    workspace: int = field(metadata={"json": "workspace"})
    before: Optional[str] = field(metadata={"json": "before"})
    after: Optional[str] = field(metadata={"json": "after"})
    time_ns: int = field(metadata={"json": "time_ns"})
    command: str = field(metadata={"json": "command"})
    changed_workspace: bool = field(metadata={"json": "changed_workspace"})
    undone: bool = field(metadata={"json": "undone"})
    target: Optional[str] = field(default=None, metadata={"json": "target"})
    reverses: Optional[int] = field(default=None, metadata={"json": "reverses"})
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
class Entry:
    """`Entry`."""

    name: str = field(metadata={"json": "name"})
    path: str = field(metadata={"json": "path"})
    kind: str = field(metadata={"json": "kind"})
    size: int = field(metadata={"json": "size"})
    id: str = field(metadata={"json": "id"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Entry":
        """Builds a `Entry` from its JSON object."""
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
    """`Tree`."""

    rev: str = field(metadata={"json": "rev"})
    path: str = field(metadata={"json": "path"})
    entries: List[Entry] = field(metadata={"json": "entries"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'entries': ('list', 'Entry')}

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
class Hunk:
    """`Hunk`."""

    id: str = field(metadata={"json": "id"})
    old_start: int = field(metadata={"json": "old_start"})
    old_lines: int = field(metadata={"json": "old_lines"})
    new_start: int = field(metadata={"json": "new_start"})
    new_lines: int = field(metadata={"json": "new_lines"})
    lines: List[str] = field(metadata={"json": "lines"})
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
class Change:
    """`Change`."""

    path: str = field(metadata={"json": "path"})
    status: str = field(metadata={"json": "status"})
    old: Optional[Dict[str, Any]] = field(metadata={"json": "old"})
    new: Optional[Dict[str, Any]] = field(metadata={"json": "new"})
    old_path: Optional[str] = field(default=None, metadata={"json": "old_path"})
    binary: Optional[bool] = field(default=None, metadata={"json": "binary"})
    insertions: Optional[int] = field(default=None, metadata={"json": "insertions"})
    deletions: Optional[int] = field(default=None, metadata={"json": "deletions"})
    hunks: Optional[List[Hunk]] = field(default=None, metadata={"json": "hunks"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'hunks': ('list', 'Hunk')}

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
class Diff:
    """`Diff`."""

    from_: str = field(metadata={"json": "from"})
    to: str = field(metadata={"json": "to"})
    files: List[Change] = field(metadata={"json": "files"})
    totals: Dict[str, Any] = field(metadata={"json": "totals"})
    overlay: Optional[int] = field(default=None, metadata={"json": "overlay"})
    ignored: Optional[List[str]] = field(default=None, metadata={"json": "ignored"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'files': ('list', 'Change')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Diff":
        """Builds a `Diff` from its JSON object."""
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
    """`Status`."""

    base: str = field(metadata={"json": "base"})
    clean: bool = field(metadata={"json": "clean"})
    changes: List[Change] = field(metadata={"json": "changes"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'changes': ('list', 'Change')}

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
class Outcome:
    """`Outcome`."""

    path: str = field(metadata={"json": "path"})
    action: str = field(metadata={"json": "action"})
    old_path: Optional[str] = field(default=None, metadata={"json": "old_path"})
    merged: Optional[bool] = field(default=None, metadata={"json": "merged"})
    conflicts: Optional[int] = field(default=None, metadata={"json": "conflicts"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Outcome":
        """Builds a `Outcome` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Written:
    """`Written`."""

    op: Optional[int] = field(metadata={"json": "op"})
    before: Optional[str] = field(metadata={"json": "before"})
    after: Optional[str] = field(metadata={"json": "after"})
    files: List[Any] = field(metadata={"json": "files"})
    target: Optional[str] = field(default=None, metadata={"json": "target"})
    written: Optional[int] = field(default=None, metadata={"json": "written"})
    deleted: Optional[int] = field(default=None, metadata={"json": "deleted"})
    applied: Optional[bool] = field(default=None, metadata={"json": "applied"})
    check: Optional[bool] = field(default=None, metadata={"json": "check"})
    undone: Optional[Dict[str, Any]] = field(default=None, metadata={"json": "undone"})
    redone: Optional[Dict[str, Any]] = field(default=None, metadata={"json": "redone"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Written":
        """Builds a `Written` from its JSON object."""
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
    """`Overlay`."""

    id: int = field(metadata={"json": "id"})
    name: Optional[str] = field(metadata={"json": "name"})
    workspace: Optional[int] = field(metadata={"json": "workspace"})
    workspace_path: str = field(metadata={"json": "workspace_path"})
    backend: str = field(metadata={"json": "backend"})
    base: str = field(metadata={"json": "base"})
    state: Optional[str] = field(metadata={"json": "state"})
    created_ns: int = field(metadata={"json": "created_ns"})
    pending: Optional[int] = field(metadata={"json": "pending"})
    running: bool = field(metadata={"json": "running"})
    path: Optional[str] = field(metadata={"json": "path"})
    ignored: List[str] = field(metadata={"json": "ignored"})
    fallback: Optional[str] = field(default=None, metadata={"json": "fallback"})
    files_copied: Optional[int] = field(default=None, metadata={"json": "files_copied"})
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
class Accepted:
    """`Accepted`."""

    overlay: int = field(metadata={"json": "overlay"})
    op: Optional[int] = field(metadata={"json": "op"})
    files: List[Any] = field(metadata={"json": "files"})
    conflicts: List[Conflict] = field(metadata={"json": "conflicts"})
    before: Optional[str] = field(default=None, metadata={"json": "before"})
    after: Optional[str] = field(default=None, metadata={"json": "after"})
    ignored: Optional[List[str]] = field(default=None, metadata={"json": "ignored"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'conflicts': ('list', 'Conflict')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Accepted":
        """Builds a `Accepted` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Rejected:
    """`Rejected`."""

    overlay: int = field(metadata={"json": "overlay"})
    op: Optional[int] = field(metadata={"json": "op"})
    paths: List[str] = field(metadata={"json": "paths"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Rejected":
        """Builds a `Rejected` from its JSON object."""
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
    """`RunResult`: schemas/run-result.schema.json (the object rewind run --json prints); with hunks: true each diff file has hunks."""

    version: int = field(metadata={"json": "version"})
    workspace: str = field(metadata={"json": "workspace"})
    before: str = field(metadata={"json": "before"})
    after: str = field(metadata={"json": "after"})
    diff: RunDiff = field(metadata={"json": "diff"})
    backend: Optional[str] = field(default=None, metadata={"json": "backend"})
    cwd: Optional[str] = field(default=None, metadata={"json": "cwd"})
    command: Optional[List[str]] = field(default=None, metadata={"json": "command"})
    after_label: Optional[str] = field(default=None, metadata={"json": "after_label"})
    exit_code: Optional[int] = field(default=None, metadata={"json": "exit_code"})
    signal: Optional[int] = field(default=None, metadata={"json": "signal"})
    signal_name: Optional[str] = field(default=None, metadata={"json": "signal_name"})
    spawn_error: Optional[str] = field(default=None, metadata={"json": "spawn_error"})
    success: Optional[bool] = field(default=None, metadata={"json": "success"})
    duration_seconds: Optional[float] = field(default=None, metadata={"json": "duration_seconds"})
    total_seconds: Optional[float] = field(default=None, metadata={"json": "total_seconds"})
    patch: Optional[str] = field(default=None, metadata={"json": "patch"})
    patch_ref: Optional[str] = field(default=None, metadata={"json": "patch_ref"})
    patch_bytes: Optional[int] = field(default=None, metadata={"json": "patch_bytes"})
    violations: Optional[List[Dict[str, Any]]] = field(default=None, metadata={"json": "violations"})
    on_violation: Optional[str] = field(default=None, metadata={"json": "on_violation"})
    reverted: Optional[List[str]] = field(default=None, metadata={"json": "reverted"})
    rolled_back: Optional[bool] = field(default=None, metadata={"json": "rolled_back"})
    skipped: Optional[List[Dict[str, Any]]] = field(default=None, metadata={"json": "skipped"})
    op: Optional[int] = field(default=None, metadata={"json": "op"})
    restore_op: Optional[int] = field(default=None, metadata={"json": "restore_op"})
    retention: Optional[Dict[str, Any]] = field(default=None, metadata={"json": "retention"})
    overlay: Optional[Dict[str, Any]] = field(default=None, metadata={"json": "overlay"})
    scratch: Optional[Dict[str, Any]] = field(default=None, metadata={"json": "scratch"})
    rewind_exit_code: Optional[int] = field(default=None, metadata={"json": "rewind_exit_code"})
    exit_reason: Optional[str] = field(default=None, metadata={"json": "exit_reason"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'diff': ('one', 'RunDiff')}

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
class RunState:
    """`RunState`."""

    run: int = field(metadata={"json": "run"})
    status: str = field(metadata={"json": "status"})
    workspace: Optional[str] = field(default=None, metadata={"json": "workspace"})
    result: Optional[RunResult] = field(default=None, metadata={"json": "result"})
    error: Optional[Error] = field(default=None, metadata={"json": "error"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'result': ('one', 'RunResult'), 'error': ('one', 'Error')}

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
class Artifact:
    """`Artifact`."""

    key: str = field(metadata={"json": "key"})
    size: int = field(metadata={"json": "size"})
    created_ns: int = field(metadata={"json": "created_ns"})
    id: str = field(metadata={"json": "id"})
    meta: Dict[str, str] = field(metadata={"json": "meta"})
    replaced: Optional[bool] = field(default=None, metadata={"json": "replaced"})
    stored_bytes: Optional[int] = field(default=None, metadata={"json": "stored_bytes"})
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
class Health:
    """`Health`."""

    ok: bool = field(metadata={"json": "ok"})
    version: str = field(metadata={"json": "version"})
    store: str = field(metadata={"json": "store"})
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
class Taken:
    """`Taken`."""

    snapshot: Optional[Snapshot] = field(metadata={"json": "snapshot"})
    unchanged: bool = field(metadata={"json": "unchanged"})
    skipped: Optional[int] = field(default=None, metadata={"json": "skipped"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'snapshot': ('one', 'Snapshot')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Taken":
        """Builds a `Taken` from its JSON object."""
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
class RunStarted:
    """`RunStarted`."""

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
class Split:
    """`Split`."""

    overlay: int = field(metadata={"json": "overlay"})
    path: str = field(metadata={"json": "path"})
    hunk: str = field(metadata={"json": "hunk"})
    parts: List[Hunk] = field(metadata={"json": "parts"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'parts': ('list', 'Hunk')}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Split":
        """Builds a `Split` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class Conflict:
    """`Conflict`."""

    path: str = field(metadata={"json": "path"})
    why: str = field(metadata={"json": "why"})
    regions: int = field(metadata={"json": "regions"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Conflict":
        """Builds a `Conflict` from its JSON object."""
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
    """`RunDiff`."""

    files_changed: int = field(metadata={"json": "files_changed"})
    insertions: int = field(metadata={"json": "insertions"})
    deletions: int = field(metadata={"json": "deletions"})
    files: List[RunFile] = field(metadata={"json": "files"})
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
    """`RunFile`."""

    path: str = field(metadata={"json": "path"})
    status: str = field(metadata={"json": "status"})
    binary: bool = field(metadata={"json": "binary"})
    insertions: int = field(metadata={"json": "insertions"})
    deletions: int = field(metadata={"json": "deletions"})
    old_path: Optional[str] = field(default=None, metadata={"json": "old_path"})
    hunks: Optional[List[Hunk]] = field(default=None, metadata={"json": "hunks"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'hunks': ('list', 'Hunk')}

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
class EventChanged:
    """`EventChanged`: paths changed in a watched workspace."""

    event: str = field(metadata={"json": "event"})
    time_ns: int = field(metadata={"json": "time_ns"})
    workspace: str = field(metadata={"json": "workspace"})
    paths: List[str] = field(metadata={"json": "paths"})
    overlay: Optional[int] = field(default=None, metadata={"json": "overlay"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "EventChanged":
        """Builds a `EventChanged` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class EventSnapshot:
    """`EventSnapshot`: a snapshot was recorded."""

    event: str = field(metadata={"json": "event"})
    time_ns: int = field(metadata={"json": "time_ns"})
    workspace: str = field(metadata={"json": "workspace"})
    id: str = field(metadata={"json": "id"})
    op: int = field(metadata={"json": "op"})
    kind: str = field(metadata={"json": "kind"})
    label: Optional[str] = field(default=None, metadata={"json": "label"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "EventSnapshot":
        """Builds a `EventSnapshot` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class EventOperation:
    """`EventOperation`: an operation was recorded (restore, apply, run, accept...)."""

    event: str = field(metadata={"json": "event"})
    time_ns: int = field(metadata={"json": "time_ns"})
    workspace: str = field(metadata={"json": "workspace"})
    op: int = field(metadata={"json": "op"})
    kind: str = field(metadata={"json": "kind"})
    before: Optional[str] = field(default=None, metadata={"json": "before"})
    after: Optional[str] = field(default=None, metadata={"json": "after"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "EventOperation":
        """Builds a `EventOperation` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class EventWatching:
    """`EventWatching`: the daemon started watching a workspace."""

    event: str = field(metadata={"json": "event"})
    time_ns: int = field(metadata={"json": "time_ns"})
    workspace: str = field(metadata={"json": "workspace"})
    dirs: int = field(metadata={"json": "dirs"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "EventWatching":
        """Builds a `EventWatching` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class EventOverflow:
    """`EventOverflow`: the watch lost track of changes; the next walk is a full one."""

    event: str = field(metadata={"json": "event"})
    time_ns: int = field(metadata={"json": "time_ns"})
    workspace: str = field(metadata={"json": "workspace"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "EventOverflow":
        """Builds a `EventOverflow` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class EventUnwatched:
    """`EventUnwatched`: the daemon stopped watching a workspace."""

    event: str = field(metadata={"json": "event"})
    time_ns: int = field(metadata={"json": "time_ns"})
    workspace: str = field(metadata={"json": "workspace"})
    reason: str = field(metadata={"json": "reason"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "EventUnwatched":
        """Builds a `EventUnwatched` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class EventRun:
    """`EventRun`: progress of a run this server started (run_event: what rewind run --events prints, and run_finished)."""

    event: str = field(metadata={"json": "event"})
    time_ns: int = field(metadata={"json": "time_ns"})
    workspace: str = field(metadata={"json": "workspace"})
    run: int = field(metadata={"json": "run"})
    run_event: str = field(metadata={"json": "run_event"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "EventRun":
        """Builds a `EventRun` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class EventDaemon:
    """`EventDaemon`: the watch daemon's file events start (up) or stop (down) reaching this stream."""

    event: str = field(metadata={"json": "event"})
    time_ns: int = field(metadata={"json": "time_ns"})
    state: str = field(metadata={"json": "state"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "EventDaemon":
        """Builds a `EventDaemon` from its JSON object."""
        kw = {}
        for f in cls.__dataclass_fields__.values():
            key = f.metadata.get("json")
            if key is not None and key in d:
                kw[f.name] = _decode(cls._decoders.get(key), d[key])
            elif key is not None and f.default is not None and f.default_factory is None:
                kw[f.name] = None
        return cls(raw=d, **kw)


@dataclass
class EventGap:
    """`EventGap`: events were missed (the reconnecting client's Last-Event-ID is older than what is kept, or the stream lagged): re-read state."""

    event: str = field(metadata={"json": "event"})
    time_ns: int = field(metadata={"json": "time_ns"})
    missed: Optional[int] = field(default=None, metadata={"json": "missed"})
    last_event_id: Optional[int] = field(default=None, metadata={"json": "last_event_id"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "EventGap":
        """Builds a `EventGap` from its JSON object."""
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
    """`OverlaySnapshot`."""

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
class OverlayRuns:
    """`OverlayRuns`."""

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
class OverlayRunChanges:
    """`OverlayRunChanges`: one run's pending changes; run 0: made outside any run; run null: runs' lines interleaved (take them by hunk id)."""

    run: Optional[int] = field(metadata={"json": "run"})
    command: Optional[str] = field(metadata={"json": "command"})
    before: Optional[str] = field(metadata={"json": "before"})
    after: Optional[str] = field(metadata={"json": "after"})
    finished: Optional[str] = field(metadata={"json": "finished"})
    files: List[OverlayRunFile] = field(metadata={"json": "files"})
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
    """`OverlayRunFile`."""

    path: str = field(metadata={"json": "path"})
    hunks: Optional[List[Hunk]] = field(metadata={"json": "hunks"})
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
class Session:
    """`Session`."""

    session: str = field(metadata={"json": "session"})
    agent: Optional[str] = field(metadata={"json": "agent"})
    first: str = field(metadata={"json": "first"})
    first_time: str = field(metadata={"json": "first_time"})
    last: str = field(metadata={"json": "last"})
    last_time: str = field(metadata={"json": "last_time"})
    snapshots: int = field(metadata={"json": "snapshots"})
    changes: int = field(metadata={"json": "changes"})
    added: int = field(metadata={"json": "added"})
    removed: int = field(metadata={"json": "removed"})
    present_lines: int = field(metadata={"json": "present_lines"})
    present: str = field(metadata={"json": "present"})
    files: List[str] = field(metadata={"json": "files"})
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
class RangeRuns:
    """`RangeRuns`."""

    a: str = field(metadata={"json": "a"})
    b: str = field(metadata={"json": "b"})
    units: List[RangeUnit] = field(metadata={"json": "units"})
    runs: List[RangeRunChanges] = field(metadata={"json": "runs"})
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})

    _decoders = {'units': ('list', 'RangeUnit'), 'runs': ('list', 'RangeRunChanges')}

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
    """`RangeUnit`."""

    run: int = field(metadata={"json": "run"})
    before: str = field(metadata={"json": "before"})
    after: str = field(metadata={"json": "after"})
    short_id: str = field(metadata={"json": "short_id"})
    time: str = field(metadata={"json": "time"})
    message: str = field(metadata={"json": "message"})
    meta: Dict[str, str] = field(metadata={"json": "meta"})
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
class RangeRunChanges:
    """`RangeRunChanges`."""

    run: Optional[int] = field(metadata={"json": "run"})
    files: List[OverlayRunFile] = field(metadata={"json": "files"})
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


_CLASSES = {
    "Error": Error,
    "Workspace": Workspace,
    "Snapshot": Snapshot,
    "Op": Op,
    "Entry": Entry,
    "Tree": Tree,
    "Hunk": Hunk,
    "Change": Change,
    "Diff": Diff,
    "Status": Status,
    "Outcome": Outcome,
    "Written": Written,
    "Overlay": Overlay,
    "Accepted": Accepted,
    "Rejected": Rejected,
    "RunResult": RunResult,
    "RunState": RunState,
    "Artifact": Artifact,
    "Health": Health,
    "Taken": Taken,
    "Contract": Contract,
    "RunStarted": RunStarted,
    "Split": Split,
    "Conflict": Conflict,
    "RunDiff": RunDiff,
    "RunFile": RunFile,
    "EventChanged": EventChanged,
    "EventSnapshot": EventSnapshot,
    "EventOperation": EventOperation,
    "EventWatching": EventWatching,
    "EventOverflow": EventOverflow,
    "EventUnwatched": EventUnwatched,
    "EventRun": EventRun,
    "EventDaemon": EventDaemon,
    "EventGap": EventGap,
    "OverlaySnapshot": OverlaySnapshot,
    "OverlayRuns": OverlayRuns,
    "OverlayRunChanges": OverlayRunChanges,
    "OverlayRunFile": OverlayRunFile,
    "Session": Session,
    "RangeRuns": RangeRuns,
    "RangeUnit": RangeUnit,
    "RangeRunChanges": RangeRunChanges,
}
