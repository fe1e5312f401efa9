# Reference library for the graph-metric parity tests (tests/graph): traccuracy lives in its
# own environment, .venv-traccuracy, and the tests drive it by subprocess
# (tests/graph/traccuracy_reference.py prints JSON). It never enters .venv.
#
# Pins: traccuracy 0.4.3 (the newest on PyPI) with the versions it resolved to and was
# checked with; imagecodecs reads the LZW-compressed CTC test TIFFs.
TRACCURACY_VENV := .venv-traccuracy
TRACCURACY_PINS := traccuracy==0.4.3 networkx==3.6.1 numpy==2.4.6 scipy==1.17.1 \
	pandas==3.1.1 scikit-image==0.26.0 tifffile==2026.3.3 imagecodecs==2026.3.6 \
	pylapy==1.1.0 numba==0.68.1 geff==1.3.1.1.3 zarr==3.1.6
TEST_DEPS += $(STAMP)/traccuracy

$(STAMP)/traccuracy: mk/traccuracy.mk
	$(PYTHON) -m venv $(TRACCURACY_VENV)
	$(TRACCURACY_VENV)/bin/python -m pip --disable-pip-version-check install --quiet $(TRACCURACY_PINS)
	$(TRACCURACY_VENV)/bin/python -c "import traccuracy.metrics, traccuracy.matchers"
	mkdir -p $(STAMP) && touch $@
