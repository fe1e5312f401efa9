# Reference environment for the AnDi 2 scoring parity tests (tests/andi/).
# andi-datasets 2.1.13 pins numpy<=1.26.4, so it cannot share .venv. It is installed
# without its declared dependencies (h5py, imageio are never used by utils_challenge)
# plus the few packages its import chain needs (stochastic is imported by models_phenom).
ANDI_VENV := .venv-andi
ANDI_PIP := $(ANDI_VENV)/bin/python -m pip --disable-pip-version-check
TEST_DEPS += $(STAMP)/andi

$(STAMP)/andi: mk/andi.mk
	$(PYTHON) -m venv $(ANDI_VENV)
	$(ANDI_PIP) install --quiet "numpy==1.26.4" "scipy>=1.11,<1.14" "pandas>=2.1,<2.3" \
		"scikit-learn>=1.3,<1.6" "matplotlib>=3.8,<3.10" tqdm
	$(ANDI_PIP) install --quiet --no-deps "andi-datasets==2.1.13" "stochastic==0.6.0"
	$(ANDI_VENV)/bin/python -c "import andi_datasets.utils_challenge as u; assert u.__name__"
	mkdir -p $(STAMP) && touch $@
