"""AnDi 2 challenge scoring (drop-in for ``andi_datasets.utils_challenge``)."""
from trackverify.andi.core import *  # noqa: F401,F403
from trackverify.andi.core import _get_error_bounds  # noqa: F401
from trackverify.andi.single import (  # noqa: F401
    check_prediction_length, error_SingleTraj_dataset, load_file_to_df,
    separate_prediction_values)
