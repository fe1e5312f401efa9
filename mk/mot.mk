# Reference libraries for the canonical-metric parity tests (tests/mot): TrackEval and
# py-motmetrics live in their own environment, .venv-mot, and the tests drive them by
# subprocess (tests/mot/reference_mot.py prints JSON). They never enter .venv.
#
# Pins: trackeval 1.3.0 (the newest on PyPI; it needs numpy >= 2.3 on Python 3.11 and
# imports cleanly with numpy 2.4; older trackeval used np.float / np.int, removed in
# numpy 1.24) and motmetrics 1.4.0, with the numpy / scipy / pandas they were checked with.
MOT_VENV := .venv-mot
MOT_PINS := trackeval==1.3.0 motmetrics==1.4.0 numpy==2.4.6 scipy==1.17.1 pandas==3.1.1
TEST_DEPS += $(STAMP)/mot

$(STAMP)/mot: mk/mot.mk
	$(PYTHON) -m venv $(MOT_VENV)
	$(MOT_VENV)/bin/python -m pip --disable-pip-version-check install --quiet $(MOT_PINS)
	$(MOT_VENV)/bin/python -c "import trackeval.metrics, motmetrics"
	mkdir -p $(STAMP) && touch $@
