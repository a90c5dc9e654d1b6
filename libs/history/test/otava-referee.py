# Apache Otava (PyPI apache-otava 0.8.0, .tools/otava-venv) as the referee of libs/stats eDivisive.
# Reads JSON on stdin, prints JSON:
# - a list of series: each series' change point indices (H8), with Otava's defaults below;
# - {"mode": "changepoints", "series": [...], "permutations": R, "seedBase": k}: the same with R
#   permutations and seed k + i for series i (H8b b);
# - {"mode": "candidates", "series": [...], "segments": [[start, end], ...], "minSize": m}: per series
#   and segment, Otava's best split [index, qhat] of series[start:end] (H8b a). With m = 1 it is
#   `get_candidate_change_point` as it stands; with m > 1 the argmax of its Q matrix (`_get_Q_vals`)
#   over the splits with at least m values a side: Q[i][j] is the split at index i + 1 + start with
#   end j + 2 + start (otava/change_point_divisive/calculator.py, its docstring of `_get_Q_vals`).
# Otava's original E-divisive (Matteson & James 2014) is otava/analysis.py
# `compute_change_points_orig(series, max_pvalue, seed)`, whose body is the three lines below:
# ChangePointDetector with PermutationsSignificanceTester (100 permutations, p = extreme /
# (permutations + 1), significant when p <= max_pvalue) and PairDistanceCalculator (energy
# distance, power 1); each ChangePoint's `index` is the first value of the new segment
# (otava/change_point_divisive/base.py, calculator.py, detector.py, significance_test.py).
# They are called directly: importing otava.analysis also loads scipy (its t-test), seconds more.
import json
import sys

import numpy as np
from otava.change_point_divisive.calculator import PairDistanceCalculator
from otava.change_point_divisive.detector import ChangePointDetector
from otava.change_point_divisive.significance_test import PermutationsSignificanceTester


def change_points(series, permutations, seed_base):
    out = []
    for i, xs in enumerate(series):
        tester = PermutationsSignificanceTester(
            max_pvalue=0.05, permutations=permutations, calculator=PairDistanceCalculator, seed=seed_base + i
        )
        detector = ChangePointDetector(significance_tester=tester, calculator=PairDistanceCalculator)
        out.append([[int(cp.index), float(cp.stats.pvalue)] for cp in detector.get_change_points(series=xs)])
    return out


def candidate(calc, start, end, min_size):
    if min_size <= 1:
        c = calc.get_candidate_change_point(slice(start, end))
        return [int(c.index), float(c.qhat)]
    q = calc._get_Q_vals(start, end)
    taus = np.arange(start + 1, end)[:, None]
    kappas = np.arange(start + 2, end + 1)[None, :]
    ok = (taus - start >= min_size) & (kappas - taus >= min_size)
    if not ok.any():
        return None
    masked = np.where(ok, q, -np.inf)
    i, j = np.unravel_index(np.argmax(masked), masked.shape)
    return [int(i + 1 + start), float(q[i][j])]


req = json.load(sys.stdin)
if isinstance(req, list):
    json.dump([[i for i, _ in cps] for cps in change_points(req, 100, 1000)], sys.stdout)
elif req["mode"] == "changepoints":
    json.dump(change_points(req["series"], req["permutations"], req["seedBase"]), sys.stdout)
else:
    out = []
    for xs in req["series"]:
        calc = PairDistanceCalculator(np.array(xs, dtype=np.float64))
        out.append([candidate(calc, s, e, req["minSize"]) for s, e in req["segments"]])
    json.dump(out, sys.stdout)
