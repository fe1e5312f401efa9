"""Variable matching against a reference conversion (EVALUATORS B4).

Reference variables i and agent variables j are paired one-to-one by the Hungarian
algorithm (:func:`trackverify.assignment.assign`) over the cost

``C_ij = w_sem (1 - cos(e_i, e_j)) + w_rng range_cost_ij + w_frac frac_cost_ij``

* ``e`` = all-MiniLM-L6-v2 embedding of the name with ``_``/``-`` read as spaces;
* ``range_cost = max(|lo_r - lo_a|, |hi_r - hi_a|) / max(hi_r - lo_r, 1e-6)``, and 0 when
  both variables are constant (span < 1e-6);
* ``frac_cost`` = L1 distance between the class-fraction vectors sorted in decreasing
  order, the shorter one padded with zeros;
* weights: inputs (0.95, 0.05, 0), outputs (0.475, 0.5, 0.025).

Identical names are paired at cost 0 and every other pairing of either variable is
forbidden. Different variable counts make every cost infinite (matching fails). The
check passes when the mean cost of the assigned pairs is < 1.0 and, for outputs, every
pair's range is equal endpoint for endpoint.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from trackverify.assignment import assign

INPUT_WEIGHTS = (0.95, 0.05, 0.0)
OUTPUT_WEIGHTS = (0.475, 0.5, 0.025)
MAX_MEAN_COST = 1.0
_EPS_SPAN = 1e-6


def range_cost(ref: np.ndarray, agent: np.ndarray) -> np.ndarray:
    """(n_ref, n_agent) endpoint deviation normalised by the reference span (see module)."""
    ref = np.asarray(ref, dtype=np.float64).reshape(-1, 2)
    agent = np.asarray(agent, dtype=np.float64).reshape(-1, 2)
    dev = np.maximum(np.abs(ref[:, None, 0] - agent[None, :, 0]),
                     np.abs(ref[:, None, 1] - agent[None, :, 1]))
    ref_span = ref[:, 1] - ref[:, 0]
    cost = dev / np.maximum(ref_span, _EPS_SPAN)[:, None]
    both_constant = (ref_span < _EPS_SPAN)[:, None] & ((agent[:, 1] - agent[:, 0]) < _EPS_SPAN)[None]
    return np.where(both_constant, 0.0, cost)


def fraction_cost(ref: list[np.ndarray], agent: list[np.ndarray]) -> np.ndarray:
    """(n_ref, n_agent) L1 distance of the decreasingly sorted, zero-padded fraction vectors."""
    width = max([len(f) for f in list(ref) + list(agent)] + [1])

    def table(fracs: list[np.ndarray]) -> np.ndarray:
        out = np.zeros((len(fracs), width))
        for k, f in enumerate(fracs):
            out[k, :len(f)] = np.sort(np.asarray(f, dtype=np.float64))[::-1]
        return out

    a, b = table(ref), table(agent)
    return np.abs(a[:, None, :] - b[None, :, :]).sum(axis=2)


def cost_matrix(ref_names: list[str], agent_names: list[str], range_c: np.ndarray,
                frac_c: np.ndarray, weights: tuple[float, float, float],
                embed: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """The B4 cost matrix; ``embed`` is called only when some pair is not forced by names."""
    n, m = len(ref_names), len(agent_names)
    if n != m:
        return np.full((n, m), np.inf)
    w_sem, w_rng, w_frac = np.asarray(weights, dtype=np.float64) / float(np.sum(weights))
    forced_rows: dict[int, int] = {}
    used_cols: set[int] = set()
    for i, name in enumerate(ref_names):
        for j, other in enumerate(agent_names):
            if j not in used_cols and other == name:
                forced_rows[i] = j
                used_cols.add(j)
                break
    cost = np.zeros((n, m))
    free_rows = [i for i in range(n) if i not in forced_rows]
    free_cols = [j for j in range(m) if j not in used_cols]
    if free_rows:
        vectors = embed([ref_names[i] for i in free_rows] + [agent_names[j] for j in free_cols])
        e_ref, e_agent = vectors[:len(free_rows)], vectors[len(free_rows):]
        cosine = e_ref @ e_agent.T
        sub = np.ix_(free_rows, free_cols)
        cost[sub] = (w_sem * (1.0 - cosine) + w_rng * range_c[sub] + w_frac * frac_c[sub])
    forbidden = np.zeros((n, m), dtype=bool)
    for i, j in forced_rows.items():
        forbidden[i, :] = True
        forbidden[:, j] = True
        forbidden[i, j] = False
    return np.where(forbidden, np.inf, cost)


def match_variables(ref_names: list[str], agent_names: list[str], ref_ranges: np.ndarray,
                    agent_ranges: np.ndarray, *, kind: str,
                    ref_fractions: list[np.ndarray] | None = None,
                    agent_fractions: list[np.ndarray] | None = None,
                    embed: Callable[[list[str]], np.ndarray] | None = None) -> dict:
    """Pair reference and agent variables of one ``kind`` ("input" or "output").

    Returns ``{passed, mean_cost, pairs: [{reference, agent, cost, range_error,
    fraction_error, ranges_equal}], ...}``. ``embed`` defaults to all-MiniLM-L6-v2 and may
    raise :class:`~trackverify.conversion.embeddings.EmbeddingsUnavailable`.
    """
    if embed is None:
        from trackverify.conversion.embeddings import embed_names as embed
    weights = OUTPUT_WEIGHTS if kind == "output" else INPUT_WEIGHTS
    range_c = range_cost(ref_ranges, agent_ranges)
    if kind == "output":
        frac_c = fraction_cost(ref_fractions or [], agent_fractions or [])
    else:
        frac_c = np.zeros((len(ref_names), len(agent_names)))
    cost = cost_matrix(list(ref_names), list(agent_names), range_c, frac_c, weights, embed)
    rows, cols = assign(cost)
    complete = len(ref_names) == len(agent_names) and len(rows) == len(ref_names)
    pairs = []
    for i, j in zip(rows, cols):
        pair = {"reference": ref_names[i], "agent": agent_names[j], "cost": cost[i, j],
                "range_error": range_c[i, j],
                "reference_range": ref_ranges[i], "agent_range": agent_ranges[j]}
        if kind == "output":
            pair["fraction_error"] = frac_c[i, j]
            pair["ranges_equal"] = bool(np.array_equal(ref_ranges[i], agent_ranges[j]))
        pairs.append(pair)
    mean_cost = float(cost[rows, cols].mean()) if complete and len(rows) else None
    passed = complete and (mean_cost is None or mean_cost < MAX_MEAN_COST)
    if kind == "output":
        passed = passed and all(p["ranges_equal"] for p in pairs)
    details = {"mean_cost": mean_cost, "threshold": MAX_MEAN_COST, "pairs": pairs,
               "n_reference": len(ref_names), "n_agent": len(agent_names)}
    if not complete:
        details["reason"] = (f"{len(agent_names)} {kind} variables, the reference has "
                             f"{len(ref_names)}" if len(ref_names) != len(agent_names)
                             else "no complete one-to-one assignment")
    return {"passed": bool(passed), **details, "pairing": dict(zip(rows.tolist(), cols.tolist()))}
