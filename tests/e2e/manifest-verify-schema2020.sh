#!/bin/sh
# manifest-verify --schema with JSON Schema 2020-12: the embedded meta-schema checks a schema,
# --schema-dir registers a folder by $id, --format-assert, a catastrophic pattern (exit 2).
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
META=https://json-schema.org/draft/2020-12/schema

expect_exit "meta-schema accepts our graph schema" 0 \
    manifest-verify --schema $META "$GOLDEN_ROOT/schemas/calculet-graph-v1.schema.json"
printf '{\n  "type": "strng",\n  "properties": {"a": {"minLength": -1}}\n}\n' > bad.schema.json
expect_exit "meta-schema rejects a broken schema" 1 manifest-verify --schema $META bad.schema.json
expect_grep "with file:line:col" '^bad\.schema\.json:2:11: ' out.txt
expect_grep "and the inner place" '^bad\.schema\.json:3:37: ' out.txt

mkdir -p lib/sub
printf '{"$id": "https://e2e.test/port", "type": "integer", "minimum": 1, "maximum": 65535}\n' \
    > lib/sub/port.json
printf '{"$ref": "https://e2e.test/port"}\n' > uses.schema.json
printf '70000\n' > big.json
printf '8080\n' > fine.json
expect_exit "an unknown \$id is not fetched: exit 2" 2 \
    manifest-verify --schema uses.schema.json fine.json
expect_grep "says nothing is fetched" 'nothing is fetched' err.txt
expect_exit "--schema-dir finds it by \$id" 0 \
    manifest-verify --schema-dir lib --schema uses.schema.json fine.json
expect_exit "--schema-dir: a violation is a verdict" 1 \
    manifest-verify --schema-dir lib --schema uses.schema.json big.json
expect_exit "--schema names a folder's \$id" 1 \
    manifest-verify --schema-dir lib --schema https://e2e.test/port big.json

printf '{"type": "object", "properties": {"when": {"format": "date-time"}}, "unevaluatedProperties": false}\n' \
    > when.schema.json
printf '{"when": "yesterday"}\n' > when.json
expect_exit "format is an annotation by default" 0 manifest-verify --schema when.schema.json when.json
expect_exit "--format-assert makes it an assertion" 1 \
    manifest-verify --format-assert --schema when.schema.json when.json
expect_grep "keyword format" '\(format\)' out.txt
printf '{"when": "2024-02-29T12:00:00Z", "extra": 1}\n' > extra.json
expect_exit "unevaluatedProperties: false" 1 manifest-verify --schema when.schema.json extra.json
expect_grep "unevaluatedProperties place" '^extra\.json:1:43: .*unevaluatedProperties' out.txt

printf '{"pattern": "^(a+)+$"}\n' > evil.schema.json
printf '"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"\n' > evil.json
expect_exit "catastrophic pattern: could not check" 2 \
    timeout 60 manifest-verify --schema evil.schema.json evil.json
expect_grep "match limit named" 'match limit' err.txt

# The official suite's remotes/ (tests/data/json-schema-test-suite): a plain --schema-dir reads
# its base URI (http://localhost:1234/) from the files' own $id, so a remote reference to a
# file without $id resolves; nothing is fetched without the folder.
REMOTES="$GOLDEN_ROOT/tests/data/json-schema-test-suite/remotes"
printf '{"$ref": "http://localhost:1234/draft2020-12/integer.json"}\n' > remote.schema.json
printf '"one"\n' > word.json
expect_exit "remote ref without the folder: exit 2" 2 \
    manifest-verify --schema remote.schema.json fine.json
expect_exit "remote ref over --schema-dir remotes" 0 \
    manifest-verify --schema-dir "$REMOTES" --schema remote.schema.json fine.json
expect_exit "remote ref over --schema-dir remotes: a violation" 1 \
    manifest-verify --schema-dir "$REMOTES" --schema remote.schema.json word.json
expect_exit "remote ref over --schema-dir BASEURI=remotes" 1 \
    manifest-verify --schema-dir "http://localhost:1234/=$REMOTES" --schema remote.schema.json word.json
