"""Validates the examples of examples/ with the schemas of schemas/, using Python's
`jsonschema` package: a validator in another language than ferry's, with another regular
expression engine. Prints one JSON line per example: {"name", "kind", "command", "result"},
each verdict true when the schemas accept it (null when the value is not a JSON document).

Usage: python3 check_examples.py <schemas dir> <examples dir>
"""
import json
import pathlib
import sys

from published_schemas import PublishedSchemas

schemas = PublishedSchemas(sys.argv[1])
examples_dir = pathlib.Path(sys.argv[2])
validator = schemas.validator

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
