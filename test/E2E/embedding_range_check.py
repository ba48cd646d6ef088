"""Writes, for embedding_range.test, one npy step folder per index input of
the Graphormer example with a single value out of its table: in_degree 8
at [1, 3], spd -1 at [0, 2, 5], x 49 at [0, 0, 2] (table rows: 8, 8, 49),
out_degree 100 at [1, 15]; every other file is the good step's.

usage: embedding_range_check.py GOOD_STEP_DIR OUT_DIR
"""
import os
import shutil
import sys

import numpy as np

BAD = {
    "in_degree": ((1, 3), 8),
    "spd": ((0, 2, 5), -1),
    "x": ((0, 0, 2), 49),
    "out_degree": ((1, 15), 100),
}


def main(good, out):
    for name, (where, value) in BAD.items():
        d = os.path.join(out, name)
        shutil.copytree(good, d)
        a = np.load(os.path.join(d, name + ".npy"))
        a[where] = value
        np.save(os.path.join(d, name + ".npy"), a)


if __name__ == "__main__":
    main(*sys.argv[1:])
