#!/bin/sh
# dag-check's JSON reader (issue 35: one streaming reader at every size, graph-local id maps
# with a keyed hash) against a small strict oracle in python3: json.loads with an
# object_pairs_hook that refuses duplicate keys, NaN/Infinity refused, strict UTF-8, nesting
# limited to 512 levels (docs/dag-check.md: "512 levels counted from the file's top"), and the
# few graph rules the cases below touch: op ids unique after escapes are decoded, `after`
# naming a known op other than itself, numbers non-negative integers below 2^63. Mutated
# graphs: duplicate keys, `\u0061` against `a` in ids and references, ids differing in one
# last byte (around SipHash's 8-byte blocks), very long ids, numbers at the limits, deep
# nesting, truncated files, bad UTF-8, raw control bytes. For each, the exit status must be the
# oracle's (0 accepted race-free graph, 2 refused), on the streaming path and the tree path
# (a pipe), and a refused duplicate id must be named as one.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
if ! command -v "$PY" >/dev/null 2>&1; then ok "dag-json-oracle # skip no python3"; exit 0; fi
cat > gen.py <<'GENEOF'
import json, sys
H = '{"schema": "calculet-graph/v1",\n "queues": [{"id": "A", "chip": 0}, {"id": "B", "chip": 0}],\n'
BUF = ' "buffers": [{"id": "t", "chip": 0, "space": "sram", "address": 0, "size": 256}],\n'
OPS = [
 '  {"id": "p", "queue": "A", "family": "rmsnorm", "writes": [{"buffer": "t", "offset": 0, "size": 256}]}',
 '  {"id": "s", "queue": "A", "kind": "signal", "event": "e"}',
 '  {"id": "w", "queue": "B", "kind": "wait", "event": "e"}',
 '  {"id": "r", "queue": "B", "family": "matmul", "reads": [{"buffer": "t", "offset": 0, "size": 256}]}',
]
def graph(extra=(), buf=BUF, ops=OPS):
    return (H + buf + ' "ops": [\n' + ',\n'.join(list(ops) + list(extra)) + '\n ]}\n').encode('utf-8', 'surrogatepass')
def q(s):  # a JSON string literal for s, written as given (escapes kept)
    return '"' + s + '"'
def idop(i, after=None, queue='A'):
    a = ', "after": [' + ', '.join(q(x) for x in after) + ']' if after else ''
    return '  {"id": ' + q(i) + ', "queue": "' + queue + '"' + a + '}'
cases = {}
cases['base'] = graph()
# duplicate keys
cases['dupkey-op'] = graph([ '  {"id": "x", "queue": "A", "queue": "A"}' ])
cases['dupkey-access'] = graph([ '  {"id": "x", "queue": "A", "reads": [{"buffer": "t", "buffer": "t"}]}' ])
cases['dupkey-top'] = graph().replace(b' "ops": [', b' "queues": [], "ops": [', 1)
cases['dupkey-buffer'] = graph(buf=' "buffers": [{"id": "t", "chip": 0, "chip": 0, "space": "sram", "address": 0, "size": 256}],\n')
cases['dupkey-escaped'] = graph([ '  {"id": "x", "queue": "A", "qu\\u0065ue": "A"}' ])
# escapes in ids and references: one id, however it is written
cases['esc-dup-a'] = graph([idop('a'), idop('\\u0061')])
cases['esc-dup-mixed'] = graph([idop('ab/c'), idop('a\\u0062\\/c')])
cases['esc-dup-utf8'] = graph([idop('\u00e9t\u00e9'), idop('\\u00e9t\\u00e9')])
cases['esc-dup-surrogates'] = graph([idop('x\U0001F600'), idop('x\\ud83d\\ude00')])
cases['esc-after'] = graph([idop('a'), idop('b', after=['\\u0061'])])
cases['esc-after-self'] = graph([idop('\\u0061', after=['a'])])
cases['esc-after-unknown'] = graph([idop('a'), idop('b', after=['\\u0041'])])
cases['esc-distinct-case'] = graph([idop('a'), idop('\\u0041')])
cases['esc-queue'] = graph([idop('x', queue='\\u0041')])
cases['esc-nul'] = graph([idop('a\\u0000b')])
# ids differing in their last byte, at every length around the hash's 8-byte blocks
for n in (1, 7, 8, 9, 15, 16, 17, 24, 63, 64, 65):
    base = ('k' * 80)[:n - 1]
    cases['last-byte-%d' % n] = graph([idop(base + 'a'), idop(base + 'b', after=[base + 'a'])])
    cases['same-%d' % n] = graph([idop(base + 'a'), idop(base + 'a')])
# very long ids (1 MiB), and two that differ only at the end
L = 1 << 20
cases['long-distinct'] = graph([idop('L' * L + 'a'), idop('L' * L + 'b', after=['L' * L + 'a'])])
cases['long-dup'] = graph([idop('L' * L), idop('L' * (L - 1) + '\\u004c')])
cases['long-prefix'] = graph([idop('L' * L), idop('L' * (L - 1))])
# numbers at the limits (non-negative integers below 2^63; reals, signs and 2^63 refused)
for name, v in [('0', '0'), ('max', '9223372036854775807'), ('2p63', '9223372036854775808'),
                ('2p64m1', '18446744073709551615'), ('2p64', '18446744073709551616'),
                ('huge', '1' + '0' * 400), ('neg', '-1'), ('negzero', '-0'), ('real', '1.0'),
                ('exp', '1e3'), ('lead0', '007'), ('plus', '+1'), ('nan', 'NaN'), ('inf', 'Infinity')]:
    cases['num-data_size-' + name] = graph([ '  {"id": "x", "queue": "A", "data_size": ' + v + '}' ])
    cases['num-chip-' + name] = graph(buf=' "buffers": [{"id": "t", "chip": 0, "space": "sram", "address": 0, "size": 256}, {"id": "u", "chip": ' + v + ', "space": "sram", "address": 4096, "size": 1}],\n')
# deep nesting in an unknown key's value, in the schema, in an op (refused: the grammar, or
# the type, or the key; never a crash)
for d in (10, 511, 513, 100000):
    cases['deep-after-%d' % d] = graph([ '  {"id": "x", "queue": "A", "after": ' + '[' * d + ']' * d + '}' ])
cases['deep-top-100000'] = graph().replace(b'{"schema"', b'{"deep": ' + b'[' * 100000 + b']' * 100000 + b', "schema"', 1)
# bad bytes
cases['utf8-bad-id'] = graph([idop('x')]).replace(b'"x"', b'"x\xc3"', 1)
cases['utf8-overlong'] = graph([idop('x')]).replace(b'"x"', b'"\xc0\xafx"', 1)
cases['ctrl-raw-tab'] = graph([idop('x')]).replace(b'"x"', b'"x\ty"', 1)
cases['ctrl-raw-nul'] = graph([idop('x')]).replace(b'"x"', b'"x\x00y"', 1)
# truncated files: cut at many points of a good graph
full = graph([idop('a'), idop('b', after=['a'])])
for k in range(1, 24):
    cases['trunc-%02d' % k] = full[: len(full) * k // 24]
cases['trunc-last'] = full.rstrip()[:-1]
cases['trunc-empty'] = b''
for name, data in cases.items():
    open(name + '.json', 'wb').write(data)
GENEOF
cat > oracle.py <<'OREOF'
# The strict oracle: prints "0" (a valid race-free graph: every case is race-free when valid)
# or "2 WHY" (refused). Independent of dag-check: Python's json module plus the rules above.
import json, sys
def refuse(why):
    print('2 ' + why); sys.exit(0)
def no_dups(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError('duplicate key')
    return dict(pairs)
def bad_const(c):
    raise ValueError('constant ' + c)
data = open(sys.argv[1], 'rb').read()
try:
    text = data.decode('utf-8')
except UnicodeDecodeError:
    refuse('utf-8')
try:
    doc = json.loads(text, object_pairs_hook=no_dups, parse_constant=bad_const)
except RecursionError:
    refuse('nesting')
except ValueError as e:
    refuse('json: %s' % e)
def depth(x):
    best, stack = 0, [(x, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (list, dict)):
            best = max(best, d)
            stack.extend((c, d + 1) for c in (v.values() if isinstance(v, dict) else v))
    return best
if depth(doc) > 512:
    refuse('nesting')
if not isinstance(doc, dict) or set(doc) - {'schema', 'queues', 'buffers', 'ops'}:
    refuse('top level')
def uint(v):
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2 ** 63
def name(v):
    return isinstance(v, str) and v != '' and '\0' not in v
queues = {}
for qd in doc.get('queues', []):
    if not isinstance(qd, dict) or not name(qd.get('id')) or not uint(qd.get('chip')):
        refuse('queue')
    queues[qd['id']] = qd
for b in doc.get('buffers', []):
    if not isinstance(b, dict) or not all(uint(b.get(k)) for k in ('chip', 'address', 'size')):
        refuse('buffer number')
ids = set()
for o in doc.get('ops', []):
    if not isinstance(o, dict) or not name(o.get('id')):
        refuse('op id')
    if o['id'] in ids:
        refuse('duplicate op id')
    ids.add(o['id'])
    if 'data_size' in o and not uint(o['data_size']):
        refuse('data_size')
    if 'queue' in o and o['queue'] not in queues:
        refuse('unknown queue')
for o in doc['ops']:
    for a in o.get('after', []):
        if not name(a) or a not in ids or a == o['id']:
            refuse('after')
print('0')
OREOF
"$PY" gen.py || { notok "dag-json-oracle: generator" "python failed"; exit 0; }
n=0; bad=0
for f in *.json; do
    want=$("$PY" oracle.py "$f")
    code=${want%% *}
    for path in stream pipe; do
        n=$((n + 1))
        if [ $path = stream ]; then dag-check -q "$f" > out.txt 2> err.txt; else
            dag-check -q - < "$f" > out.txt 2> err.txt; fi
        got=$?
        if [ "$got" != "$code" ]; then
            bad=$((bad + 1))
            notok "dag-json-oracle ${f%.json} ($path)" "exit $got, oracle $want: $(head -c 300 err.txt)"
        elif [ "$code" = 2 ] && [ "$(wc -l < err.txt)" -ne 1 ]; then
            bad=$((bad + 1))
            notok "dag-json-oracle ${f%.json} ($path)" "refused without exactly one line: $(head -c 300 err.txt)"
        elif [ "$want" = "2 duplicate op id" ] && ! grep -q 'duplicate op id' err.txt; then
            bad=$((bad + 1))
            notok "dag-json-oracle ${f%.json} ($path)" "not named a duplicate id: $(head -c 300 err.txt)"
        fi
    done
done
[ "$bad" -eq 0 ] && ok "dag-json-oracle: $n runs agree with the strict oracle"
# the oracle itself can fail: it refuses what it must and accepts the base graph
for c in "base:0" "esc-dup-a:2 duplicate op id" "dupkey-op:2" "esc-after:0" "trunc-12:2" \
         "long-distinct:0" "long-dup:2 duplicate op id" "num-data_size-2p63:2" "num-chip-max:0"; do
    f=${c%%:*}; w=${c#*:}
    g=$("$PY" oracle.py "$f.json")
    case "$g" in "$w"*) ok "dag-json-oracle: oracle on $f";; *) notok "dag-json-oracle: oracle on $f" "$g, wanted $w";; esac
done
