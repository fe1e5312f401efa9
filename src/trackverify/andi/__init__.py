"""AnDi 2 challenge scoring: a drop-in for ``andi_datasets.utils_challenge`` (2.1.13).

``from trackverify.andi import error_SingleTraj_dataset`` instead of ``from
andi_datasets.utils_challenge import ...``; same names and signatures, official numbers by
default, ``corrected=True`` for the fixed definitions (docs/reference/andi.md). Names are loaded on
first use, so registering the CLI group costs no scientific imports.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "codalab": ["codalab_scoring", "listdir_nohidden", "run_ensemble_task", "run_single_task",
                "transform_ref_to_res", "when_error_single"],
    "core": ["_get_error_bounds", "array_to_df", "changepoint_alpha_beta",
             "changepoint_assignment", "check_no_changepoints", "create_binary_segment",
             "df_to_array", "enforce_min_segment_length", "ensemble_changepoint_error",
             "get_VIP", "jaccard_between_segments", "jaccard_index", "label_continuous_to_list",
             "label_filter", "label_list_to_continuous", "majority_filter",
             "metric_anomalous_exponent", "metric_diffusion_coefficient",
             "metric_diffusive_state", "segment_assignment", "segment_property_errors",
             "single_changepoint_error", "unique_labelled"],
    "ensemble": ["distribution_distance", "error_Ensemble_dataset", "extract_ensemble",
                 "multimode_dist"],
    "single": ["check_prediction_length", "error_SingleTraj_dataset", "load_file_to_df",
               "separate_prediction_values"],
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(n for n in _WHERE if not n.startswith("_"))


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(importlib.import_module(f"trackverify.andi.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'trackverify.andi' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_WHERE))
