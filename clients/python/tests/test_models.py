"""The dataclasses match serve/openapi.json: one per object schema, a field per property
(by its JSON name), required properties exactly the fields without a default."""

import dataclasses

from rewind_client import models


def fields_of(cls):
    return {
        f.metadata["json"]: f
        for f in dataclasses.fields(cls)
        if f.metadata.get("json") is not None
    }


def test_every_object_schema_has_a_model(openapi):
    objects = {n for n, s in openapi["components"]["schemas"].items() if s.get("type") == "object"}
    assert objects == set(models._CLASSES), "regenerate: python3 clients/python/tools/gen_models.py"


def test_model_fields_match_the_document(openapi):
    schemas = openapi["components"]["schemas"]
    for name, cls in models._CLASSES.items():
        schema = schemas[name]
        # An `allOf` of a referenced object extends it (gen_models.py merges the two); other
        # `allOf` parts (conditions such as RunResult's if/then) add no properties.
        parts = [
            schemas[p["$ref"].rsplit("/", 1)[1]] for p in schema.get("allOf", []) if "$ref" in p
        ] + [schema]
        props = {p for part in parts for p in part.get("properties", {})}
        fields = fields_of(cls)
        assert set(fields) == props, f"{name}: fields {sorted(fields)} vs properties {sorted(props)}"
        required = {r for part in parts for r in part.get("required", [])}
        without_default = {
            k
            for k, f in fields.items()
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        }
        assert without_default == required, f"{name}: required {sorted(required)}"


def test_nested_objects_are_decoded():
    d = models.Changes.from_json(
        {
            "old": "a",
            "new": "live",
            "totals": {"files_changed": 1, "insertions": 1, "deletions": 1},
            "files": [
                {
                    "path": "x",
                    "status": "modified",
                    "old": None,
                    "new": None,
                    "hunks": [
                        {"id": "0123456789ab", "old_start": 1, "old_lines": 1,
                         "new_start": 1, "new_lines": 1, "lines": ["-a\n", "+b\n"],
                         "pending": False}
                    ],
                }
            ],
            "new_field": 1,
        }
    )
    assert d.old == "a"
    assert isinstance(d.totals, models.Totals)
    assert isinstance(d.files[0], models.Change)
    assert isinstance(d.files[0].hunks[0], models.Hunk)
    assert d.files[0].hunks[0].id == "0123456789ab"
    assert d.raw["new_field"] == 1
