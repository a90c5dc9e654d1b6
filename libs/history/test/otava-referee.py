# Apache Otava (PyPI apache-otava 0.8.0, .tools/otava-venv) as the referee of libs/stats eDivisive:
# reads a JSON list of series on stdin, prints a JSON list of each series' change point indices.
# Otava's original E-divisive (Matteson & James 2014) is otava/analysis.py
# `compute_change_points_orig(series, max_pvalue, seed)`, whose body is the three lines below:
# ChangePointDetector with PermutationsSignificanceTester (100 permutations, p = extreme /
# (permutations + 1), significant when p <= max_pvalue) and PairDistanceCalculator (energy
# distance, power 1); each ChangePoint's `index` is the first value of the new segment
# (otava/change_point_divisive/base.py, calculator.py, detector.py, significance_test.py).
# They are called directly: importing otava.analysis also loads scipy (its t-test), seconds more.
import json
import sys

from otava.change_point_divisive.calculator import PairDistanceCalculator
from otava.change_point_divisive.detector import ChangePointDetector
from otava.change_point_divisive.significance_test import PermutationsSignificanceTester

series = json.load(sys.stdin)
out = []
for i, xs in enumerate(series):
    tester = PermutationsSignificanceTester(
        max_pvalue=0.05, permutations=100, calculator=PairDistanceCalculator, seed=1000 + i
    )
    detector = ChangePointDetector(significance_tester=tester, calculator=PairDistanceCalculator)
    out.append([int(cp.index) for cp in detector.get_change_points(series=xs)])
json.dump(out, sys.stdout)
