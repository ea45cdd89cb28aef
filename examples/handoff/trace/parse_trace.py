# Reads per-op-per-chip.csv and prints nanoseconds per op and chip.
import csv, sys, collections
t = collections.Counter()
for r in csv.DictReader(open(sys.argv[1])):
    t[(r['op'], r['chip'])] += int(r['end_ns']) - int(r['start_ns'])
for k, v in sorted(t.items()):
    print(*k, v)
