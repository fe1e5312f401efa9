"""What a run says about certification, built from the run itself.

:func:`certification_block` goes to ``results.json`` -> ``certification``: whether and how
the threshold was fitted, the guarantee (or its absence) with its assumption, the check of
the guarantee's quantity on the evaluated animals, and the *alerts* that turn the report's
"Read this first" box red:

- the evaluated animals' mean false-certification rate is above the target; or
- more than half of any condition's labelled errors are certified (pooled over recordings).

A label-free shift check adds a *warning* (not an alert): ``k`` of ``m`` evaluated animals
have a certified coverage outside the range of the ``n`` calibration animals'. An
exchangeable animal falls outside with probability ``p = 2 / (n + 1)`` (its rank among
``n + 1``); the warning fires when ``P(Binomial(m, p) >= k) < 0.05`` (a heuristic: the
evaluated animals share one calibration range, so they are not independent).

:func:`read_first` is the box's list of statements, in words, from the same results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scipy.stats import binom

from trackverify.benchmark.certify.fit import check_on_evaluated
from trackverify.benchmark.certify.targets import FCR_TARGET

#: A condition with more than this share of its errors certified raises an alert.
ALERT_SHARE = 0.5
#: The shift warning fires when so many animals outside the range would have this probability.
SHIFT_LEVEL = 0.05
NO_GUARANTEE = ("No guarantee: the threshold {threshold:g} µm is a declared value, not fitted on "
                "calibration animals, so nothing bounds the share of wrong identities it certifies.")


def certification_block(fitted: dict | None, declared_threshold: float, threshold: float,
                        pooled: Mapping[str, dict], per_recording_all: Mapping[str, dict],
                        animal_of: Mapping, all_key: str) -> dict:
    """The ``certification`` block of ``results.json`` (see the module docstring)."""
    alerts, warnings = [], [] if fitted is None else list(fitted.get("warnings", []))
    evaluated = None
    if fitted is not None and fitted.get("kind") == FCR_TARGET:
        evaluated = check_on_evaluated(fitted, per_recording_all, animal_of)
        if evaluated["above_target"]:
            alerts.append(
                f"On the {evaluated['animals_with_errors']} evaluated animal(s) the mean "
                f"false-certification rate is {evaluated['mean_fcr']:.3g}, above the target "
                f"{evaluated['target']:g}: the calibration did not transfer to these animals "
                "(or they are not exchangeable with the calibration animals).")
        shifted = evaluated["coverage_outside_calibration_range"]
        band = evaluated["calibration_animal_coverage"]
        if shifted and band is not None:
            chance = 2 / (band["animals"] + 1)
            m = len(evaluated["per_animal_certified_coverage"])
            surprise = float(binom.sf(len(shifted) - 1, m, chance))
            if surprise < SHIFT_LEVEL:
                names = ", ".join(f"{a} ({c:.4g})" for a, c in list(shifted.items())[:5])
                warnings.append(
                    f"Possible distribution shift: {len(shifted)} of {m} evaluated animal(s) have "
                    f"a certified coverage outside the {band['animals']} calibration animals' range "
                    f"[{band['min']:.4g}, {band['max']:.4g}] ({names}{', ...' if len(shifted) > 5 else ''}); "
                    f"an exchangeable animal falls outside with probability {chance:.2g}, so this "
                    f"many or more has probability {surprise:.2g}. Animals scored unlike the "
                    "calibration animals may not be exchangeable with them, and the guarantee may "
                    "not hold for them.")
    for condition, block in pooled.items():
        fcr = block.get("false_certification_rate")
        if condition != all_key and fcr is not None and fcr > ALERT_SHARE:
            alerts.append(f"{condition}: {fcr:.1%} of its {block['n_errors']} wrong identities are "
                          f"certified at {threshold:g} µm.")
    return {
        "fitted": fitted is not None,
        "target": None if fitted is None else fitted["target"],
        "method": None if fitted is None else fitted.get("method"),
        "guarantee": (NO_GUARANTEE.format(threshold=threshold) if fitted is None
                      else fitted["guarantee"]),
        "assumption": None if fitted is None else fitted.get("assumption"),
        "threshold_um": threshold,
        "declared_threshold_um": declared_threshold,
        "fit_partitions": None if fitted is None else "/".join(fitted["fit_partitions"]),
        "smallest_reachable_target": None if fitted is None else fitted.get("smallest_reachable_target"),
        "evaluated": evaluated,
        "warnings": warnings,
        "alerts": alerts,
    }


def read_first(verifier: Mapping, certification: Mapping, partitions_note: str | None,
               fixed_caveats: Sequence[str]) -> list[str]:
    """The "Read this first" statements, from the run: the actual verifier and its evidence,
    whether and how the threshold was fitted, the guarantee or its absence, the assumption,
    then the run's other caveats."""
    name, evidence = verifier["name"], verifier["evidence"]
    out = [f"Verifier: {name} (evidence: {evidence}); a row is certified when its score is finite "
           f"and at most {certification['threshold_um']:g} µm."]
    target = certification["target"]
    if certification["fitted"]:
        how = (f"fitted on the {certification['fit_partitions']} animals to reach {target['kind'].removeprefix('target_').replace('_', ' ')} "
               f"<= {target['level']:g}" + (f" by {certification['method']}" if certification["method"] else "")
               + (f" with delta = {target['delta']:g}" if target.get("delta") is not None else ""))
        out.append(f"Threshold: {how} (declared value was {certification['declared_threshold_um']:g} µm).")
    else:
        out.append("Threshold: not fitted; it is the declared value."
                   + (f" {partitions_note}." if partitions_note else ""))
    out.append(certification["guarantee"])
    if certification["assumption"]:
        out.append("Assumption: " + certification["assumption"])
    evaluated = certification["evaluated"]
    if evaluated and evaluated["mean_fcr"] is not None:
        out.append(f"Check on the evaluated animals: mean false-certification rate "
                   f"{evaluated['mean_fcr']:.3g} over {evaluated['animals_with_errors']} animal(s) "
                   f"with errors (target {evaluated['target']:g}); {evaluated['note']}.")
    out.extend(certification["warnings"])
    out.extend(fixed_caveats)
    return out


def caveats(verifier: str, evidence: str) -> list[str]:
    """The standing caveats that apply to this run's verifier."""
    out = []
    if evidence == "consistency":
        out.append(f"{verifier} is consistency evidence: it checks an assumption (such as small "
                   "deformation from the anchor frame) and penalises real tissue motion, so it is a "
                   "consistency diagnostic, not an independent certificate of deformation.")
    out.append("No confidence intervals or pooled generalisation claims are made from one specimen; "
               "with five or more animals, intervals are by animal (cluster bootstrap), never by frame.")
    out.append("tracking_gt diagnostics are defined by this benchmark; they are not HOTA or IDF1.")
    return out
