# Reference library for the Cell Tracking Challenge parity tests (tests/graph): py-ctcmetrics,
# which follows the Challenge's own evaluation code, lives in its own environment,
# .venv-ctcmetrics, and the tests drive it by subprocess (tests/graph/ctcmetrics_reference.py
# prints JSON). It never enters .venv.
#
# Pins: py-ctcmetrics 1.3.3 with the versions it resolved to and was checked with.
CTCMETRICS_VENV := .venv-ctcmetrics
CTCMETRICS_PINS := py-ctcmetrics==1.3.3 numpy==2.4.6 scipy==1.17.1 pandas==3.1.1 \
	scikit-learn==1.9.1 tifffile==2026.3.3 imagecodecs==2026.3.6 joblib==1.6.0 \
	threadpoolctl==3.8.0 cloudpickle==3.1.3 narwhals==2.29.0 python-dateutil==4.0.0 \
	tzdata==2026.6
TEST_DEPS += $(STAMP)/ctcmetrics

$(STAMP)/ctcmetrics: mk/ctcmetrics.mk
	$(PYTHON) -m venv $(CTCMETRICS_VENV)
	$(CTCMETRICS_VENV)/bin/python -m pip --disable-pip-version-check install --quiet $(CTCMETRICS_PINS)
	$(CTCMETRICS_VENV)/bin/python -c "import ctc_metrics.scripts.evaluate, ctc_metrics.metrics"
	mkdir -p $(STAMP) && touch $@
