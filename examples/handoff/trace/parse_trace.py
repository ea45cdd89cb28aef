# Reads per-op-per-chip.csv and prints cycles per family and chip.
import csv, sys, collections
t = collections.Counter()
for r in csv.DictReader(open(sys.argv[1])):
    t[(r['family'], r['chip'])] += int(r['end_cycle']) - int(r['start_cycle'])
for k, v in sorted(t.items()):
    print(*k, v)
