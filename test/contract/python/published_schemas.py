"""The schemas of schemas/ as Python `jsonschema` validators (draft 2020-12), shared by the
checks in this folder.

Written for jsonschema 4.10 (Debian bookworm) and later, hence RefResolver; the schemas
refer only within their own files, and any attempt to download one fails.
"""
import json
import pathlib
import warnings

import jsonschema

# RefResolver is deprecated from 4.18 on, in favour of a package 4.10 does not have.
warnings.simplefilter("ignore", DeprecationWarning)


def no_download(uri):
    # Every reference resolves inside the files; a validator must never fetch one.
    raise RuntimeError("refused to download " + uri)


class PublishedSchemas:
    def __init__(self, schemas_dir):
        self.store = {}
        for path in sorted(pathlib.Path(schemas_dir).rglob("*.schema.json")):
            schema = json.loads(path.read_text(encoding="utf-8"))
            self.store[schema["$id"]] = schema

    def validator(self, relative):
        """The validator of schemas/<relative>, e.g. `command.schema.json`."""
        schema = self.store[next(key for key in self.store if key.endswith("/schemas/" + relative))]
        jsonschema.Draft202012Validator.check_schema(schema)
        resolver = jsonschema.RefResolver(
            base_uri=schema["$id"],
            referrer=schema,
            store=self.store,
            handlers={"http": no_download, "https": no_download},
        )
        return jsonschema.Draft202012Validator(
            schema, resolver=resolver, format_checker=jsonschema.FormatChecker()
        )
