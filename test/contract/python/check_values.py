"""Judges JSON texts with one schema of schemas/, using Python's `jsonschema` package. Python
reads JSON integers exactly, where JavaScript rounds them to doubles, so a value such as an id
of 9007199254740993 reaches the validator with every digit.

Usage: python3 check_values.py <schemas dir> <schema file, e.g. command.schema.json>
Reads one JSON text per line on stdin; prints true or false for each, in order.
"""
import json
import sys

from published_schemas import PublishedSchemas

validator = PublishedSchemas(sys.argv[1]).validator(sys.argv[2])
for line in sys.stdin:
    if line.strip():
        print(json.dumps(validator.is_valid(json.loads(line))))
