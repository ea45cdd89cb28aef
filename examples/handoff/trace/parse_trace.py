# Reads the per-op per-chip trace (performance/raw-device-trace.csv) and prints cycles per side, family and chip.
import csv, sys, collections
t = collections.Counter()
for r in csv.DictReader(open(sys.argv[1])):
    t[(r['side'], r['family'], r['chip'])] += int(r['end_cycle']) - int(r['start_cycle'])
for k, v in sorted(t.items()):
    print(*k, v)
