"""Validates the examples of examples/ with the schemas of schemas/, using Python's
`jsonschema` package: a validator in another language than ferry's, with another regular
expression engine. Prints one JSON line per example: {"name", "kind", "command", "result"},
each verdict true when the schemas accept it (null when the value is not a JSON document).

Written for jsonschema 4.10 (Debian bookworm) and later, hence RefResolver; the schemas
refer only within their own file, and any attempt to download one fails.

Usage: python3 check_examples.py <schemas dir> <examples dir>
"""
import json
import pathlib
import sys
import warnings

import jsonschema

# RefResolver is deprecated from 4.18 on, in favour of a package 4.10 does not have.
warnings.simplefilter("ignore", DeprecationWarning)

schemas_dir = pathlib.Path(sys.argv[1])
examples_dir = pathlib.Path(sys.argv[2])

store = {}
for path in sorted(schemas_dir.rglob("*.schema.json")):
    schema = json.loads(path.read_text(encoding="utf-8"))
    store[schema["$id"]] = schema


def no_download(uri):
    # Every reference resolves inside the files; a validator must never fetch one.
    raise RuntimeError("refused to download " + uri)


def validator(relative):
    schema = store[next(key for key in store if key.endswith("/schemas/" + relative))]
    jsonschema.Draft202012Validator.check_schema(schema)
    resolver = jsonschema.RefResolver(
        base_uri=schema["$id"],
        referrer=schema,
        store=store,
        handlers={"http": no_download, "https": no_download},
    )
    return jsonschema.Draft202012Validator(
        schema, resolver=resolver, format_checker=jsonschema.FormatChecker()
    )


command = validator("command.schema.json")
headers = validator("command.headers.schema.json")
result = validator("result.schema.json")

for folder, kind in (("commands", "valid"), ("invalid", "invalid")):
    for path in sorted((examples_dir / folder).glob("*.json")):
        example = json.loads(path.read_text(encoding="utf-8"))
        if "command" in example:
            value, parsed = example["command"], True
        else:
            try:
                value, parsed = json.loads(example["raw_value"]), True
            except ValueError:
                value, parsed = None, False
        verdict = None
        if parsed:
            verdict = headers.is_valid(example.get("headers", {})) and command.is_valid(value)
        print(
            json.dumps(
                {
                    "name": path.stem,
                    "kind": kind,
                    "command": verdict,
                    "result": result.is_valid(example["expected_result"]),
                }
            )
        )
