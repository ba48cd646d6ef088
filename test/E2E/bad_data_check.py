"""Spoils an OGB raw-layout sample (examples/ogb/make_sample.py) for
bad_data.test:

  bad_data_check.py feature DIR VALUE   node 7's second feature := VALUE
  bad_data_check.py no-edges DIR        raw/edge.csv.gz without lines
"""
import gzip
import os
import sys


def main(what, d, value=None):
    if what == "feature":
        p = os.path.join(d, "raw", "node-feat.csv.gz")
        rows = gzip.open(p, "rt").read().split("\n")
        cols = rows[7].split(",")
        cols[1] = value
        rows[7] = ",".join(cols)
        gzip.open(p, "wt").write("\n".join(rows))
    elif what == "no-edges":
        gzip.open(os.path.join(d, "raw", "edge.csv.gz"), "wt").write("")
    else:
        sys.exit("unknown case " + what)


if __name__ == "__main__":
    main(*sys.argv[1:])
