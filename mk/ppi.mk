# Reference library of the error-rate benchmark's PPI comparison (benchmarks/error_rate_coverage.py
# --ppi): ppi-python (module ppi_py) lives in its own environment, .venv-ppi, driven by
# subprocess (benchmarks/ppi_reference.py). It never enters .venv: the package ships a
# top-level `tests` package that hides this project's tests/. No test needs it; build it with
# `make .venv-ppi`.
#
# Pins: ppi-python 0.2.3 with the versions it resolved to and was checked with.
PPI_VENV := .venv-ppi
PPI_PINS := ppi-python==0.2.3 numpy==2.4.6 scipy==1.17.1 pandas==3.1.1 statsmodels==0.15.0 \
	numba==0.68.1 llvmlite==0.50.0 scikit-learn==1.9.1 patsy==1.0.3 formulaic==1.2.2 \
	interface_meta==2.0.1 wrapt==2.5.2 narwhals==2.29.0 joblib==1.6.0 threadpoolctl==3.8.0 \
	cloudpickle==3.1.3 python-dateutil==4.0.0 tzdata==2026.6 packaging==26.4 gdown==6.5.1 \
	beautifulsoup4==4.15.0 soupsieve==4.1.4 filelock==4.3.2 requests==2.34.2 tqdm==4.70.1 \
	certifi==2026.10.19.post1 charset-normalizer==3.5.3 idna==3.21 urllib3==2.8.0 \
	PySocks==1.7.1 typing_extensions==4.16.0

$(PPI_VENV): mk/ppi.mk
	$(PYTHON) -m venv $(PPI_VENV)
	$(PPI_VENV)/bin/python -m pip --disable-pip-version-check install --quiet $(PPI_PINS)
	$(PPI_VENV)/bin/python -c "from ppi_py import ppi_mean_ci"
	touch $(PPI_VENV)
