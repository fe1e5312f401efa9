# Reference library of the registration benchmark (benchmarks/bench_registration.py --pycpd):
# pycpd (Myronenko & Song's coherent point drift in plain numpy) lives in its own environment,
# .venv-pycpd, driven by subprocess (benchmarks/pycpd_reference.py). It never enters .venv:
# it is a speed anchor, not a dependency. No test needs it; build it with `make .venv-pycpd`.
#
# Pins: pycpd 2.0.0 (the newest on PyPI) with the numpy it was checked with.
PYCPD_VENV := .venv-pycpd
PYCPD_PINS := pycpd==2.0.0 numpy==2.4.6

$(PYCPD_VENV): mk/pycpd.mk
	$(PYTHON) -m venv $(PYCPD_VENV)
	$(PYCPD_VENV)/bin/python -m pip --disable-pip-version-check install --quiet $(PYCPD_PINS)
	$(PYCPD_VENV)/bin/python -c "from pycpd import DeformableRegistration"
	touch $(PYCPD_VENV)
