"""AnDi 2 challenge scoring: a drop-in for ``andi_datasets.utils_challenge`` (2.1.13).

``from trackverify.andi import error_SingleTraj_dataset`` instead of ``from
andi_datasets.utils_challenge import ...``; same names and signatures, official numbers by
default, ``corrected=True`` for the fixed definitions (docs/andi.md).
"""
from trackverify.andi.codalab import (  # noqa: F401
    codalab_scoring, listdir_nohidden, run_ensemble_task, run_single_task,
    transform_ref_to_res, when_error_single)
from trackverify.andi.core import (  # noqa: F401
    _get_error_bounds, array_to_df, changepoint_alpha_beta, changepoint_assignment,
    check_no_changepoints, create_binary_segment, df_to_array, enforce_min_segment_length,
    ensemble_changepoint_error, get_VIP, jaccard_between_segments, jaccard_index,
    label_continuous_to_list, label_filter, label_list_to_continuous, majority_filter,
    metric_anomalous_exponent, metric_diffusion_coefficient, metric_diffusive_state,
    segment_assignment, segment_property_errors, single_changepoint_error, unique_labelled)
from trackverify.andi.ensemble import (  # noqa: F401
    distribution_distance, error_Ensemble_dataset, extract_ensemble, multimode_dist)
from trackverify.andi.single import (  # noqa: F401
    check_prediction_length, error_SingleTraj_dataset, load_file_to_df,
    separate_prediction_values)
