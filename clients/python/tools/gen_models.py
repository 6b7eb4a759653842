"""Writes src/rewind_client/models.py from serve/openapi.json: one dataclass per object schema.

Run it after changing the document: python3 clients/python/tools/gen_models.py
(tests/test_models.py fails while the two disagree).
"""

import json
import keyword
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
DOC = HERE.parents[2] / "serve" / "openapi.json"
OUT = HERE.parent / "src" / "rewind_client" / "models.py"


def py_name(name):
    return name + "_" if keyword.iskeyword(name) else name


def ref_name(s):
    return s["$ref"].rsplit("/", 1)[1]


# The document's components, for hint() to look through references to what is not an object.
SCHEMAS = {}


def hint(s):
    """The Python type of a schema, and how to decode it: None, ("one"|"list"|"dict", Class)."""
    if "$ref" in s:
        target = SCHEMAS.get(ref_name(s), {})
        if target.get("type") != "object":
            # An enum (or another plain value) the document names: no class of its own.
            return hint(target)
        return ref_name(s), ("one", ref_name(s))
    alts = s.get("oneOf") or s.get("anyOf")
    if alts and all(isinstance(a.get("const"), str) for a in alts):
        return "str", None
    if alts:
        real = [a for a in alts if a.get("type") != "null"]
        if len(real) == 1:
            h, dec = hint(real[0])
            if len(real) < len(alts) and not h.startswith("Optional["):
                h = f"Optional[{h}]"
            return h, dec
        return "Any", None
    t = s.get("type")
    nullable = False
    if isinstance(t, list):
        nullable = "null" in t
        rest = [x for x in t if x != "null"]
        t = rest[0] if len(rest) == 1 else None
    base, dec = {
        "integer": ("int", None),
        "number": ("float", None),
        "string": ("str", None),
        "boolean": ("bool", None),
    }.get(t, ("Any", None))
    if t == "array":
        items = s.get("items", {})
        if "$ref" in items:
            base, dec = f"List[{ref_name(items)}]", ("list", ref_name(items))
        else:
            base = f"List[{hint(items)[0]}]"
    elif t == "object":
        ap = s.get("additionalProperties")
        if isinstance(ap, dict) and "$ref" in ap:
            base, dec = f"Dict[str, {ref_name(ap)}]", ("dict", ref_name(ap))
        elif isinstance(ap, dict) and ap.get("type") == "string":
            base = "Dict[str, str]"
        else:
            base = "Dict[str, Any]"
    if isinstance(s.get("const"), str):
        base = "str"
    if nullable and base != "Any":
        base = f"Optional[{base}]"
    return base, dec


def main():
    doc = json.loads(DOC.read_text())
    schemas = doc["components"]["schemas"]
    SCHEMAS.update(schemas)
    lines = [
        '"""The API\'s JSON shapes as dataclasses: generated from serve/openapi.json by',
        "tools/gen_models.py (do not edit by hand). Each class's `from_json` takes the decoded",
        "JSON, ignores keys it does not know (the API only ever adds fields) and keeps the whole",
        'object in `raw`."""',
        "",
        "from __future__ import annotations",
        "",
        "from dataclasses import dataclass, field",
        "from typing import Any, Dict, List, Optional",
        "",
        "",
        "def _decode(how, value):",
        "    if value is None or how is None:",
        "        return value",
        "    kind, cls = how",
        "    cls = _CLASSES[cls]",
        '    if kind == "one":',
        "        return cls.from_json(value) if isinstance(value, dict) else value",
        '    if kind == "list":',
        "        return [cls.from_json(v) if isinstance(v, dict) else v for v in value]",
        "    return {k: cls.from_json(v) if isinstance(v, dict) else v for k, v in value.items()}",
        "",
    ]
    names = []
    for name, s in schemas.items():
        if s.get("type") != "object":
            continue
        names.append(name)
        props, required = {}, set()
        # `allOf` of a referenced object and more properties: the object extended (an API
        # response that adds fields to a wire type).
        for part in s.get("allOf", []) + [s]:
            base = schemas[ref_name(part)] if "$ref" in part else part
            props.update(base.get("properties", {}))
            required |= set(base.get("required", []))
        lines += ["", "@dataclass", f"class {name}:"]
        desc = s.get("description")
        lines.append(f'    """`{name}`' + (f": {desc}" if desc else "") + '."""')
        lines.append("")
        decoders = {}
        ordered = [p for p in props if p in required] + [p for p in props if p not in required]
        for p in ordered:
            h, dec = hint(props[p])
            if dec:
                decoders[p] = dec
            meta = f'metadata={{"json": "{p}"}}'
            if p in required:
                lines.append(f"    {py_name(p)}: {h} = field({meta})")
            else:
                if not h.startswith("Optional[") and h != "Any":
                    h = f"Optional[{h}]"
                lines.append(f"    {py_name(p)}: {h} = field(default=None, {meta})")
        lines.append(
            '    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"json": None})'
        )
        lines += [
            "",
            f"    _decoders = {decoders!r}",
            "",
            "    @classmethod",
            f"    def from_json(cls, d: Dict[str, Any]) -> \"{name}\":",
            f'        """Builds a `{name}` from its JSON object."""',
            "        kw = {}",
            "        for f in cls.__dataclass_fields__.values():",
            '            key = f.metadata.get("json")',
            "            if key is not None and key in d:",
            "                kw[f.name] = _decode(cls._decoders.get(key), d[key])",
            "            elif key is not None and f.default is not None and f.default_factory is None:",
            "                kw[f.name] = None",
            "        return cls(raw=d, **kw)",
            "",
        ]
    lines += ["", "_CLASSES = {", *[f'    "{n}": {n},' for n in names], "}", ""]
    OUT.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
