"""Compares the --export-rows outputs of two runs: same keys, and every float equal to
within a relative tolerance. Usage: compare_rows.py DIR_A DIR_B REL_TOL. Prints the number
of rows, the count of bitwise-equal rows and the largest relative difference; exits 1 on
a mismatch."""
import glob
import sys


def load(d):
    rows = {}
    for path in glob.glob(f"{d}/rows-*.tsv"):
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                rows[int(parts[0])] = (parts[1], parts[3:])
    return rows


a, b, tol = load(sys.argv[1]), load(sys.argv[2]), float(sys.argv[3])
if set(a) != set(b):
    print(f"key sets differ: {len(a)} vs {len(b)} keys, {len(set(a) ^ set(b))} not shared")
    sys.exit(1)
worst, exact = 0.0, 0
for k, (freq_a, va) in a.items():
    freq_b, vb = b[k]
    if freq_a != freq_b:
        print(f"key {k}: freq {freq_a} vs {freq_b}")
        sys.exit(1)
    exact += va == vb
    for x, y in zip(map(float, va), map(float, vb)):
        worst = max(worst, abs(x - y) / max(abs(x), abs(y), 1e-3))
print(f"{len(a)} rows, {exact} bitwise equal, max relative difference {worst:.3g}")
sys.exit(0 if worst <= tol else 1)
