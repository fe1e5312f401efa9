# The linking tracker of the audit's development case (benchmarks/linker_cases.py): laptrack
# lives in its own environment, .venv-laptrack, driven by subprocess. It never enters .venv
# and is no dependency of the library; no test needs it. Build it with `make .venv-laptrack`.
#
# Pins: laptrack 0.17.1 with the versions it resolved to and was run with.
LAPTRACK_VENV := .venv-laptrack
LAPTRACK_PINS := laptrack==0.17.1 pyarrow==26.0.1 numpy==2.4.6 scipy==1.17.1 pandas==3.1.1 \
	networkx==3.6.1 pydantic==2.14.4 pydantic_core==2.50.5 annotated-types==0.8.0 \
	typing-inspection==0.4.5 typing_extensions==4.16.0 scikit-image==0.26.0 \
	scikit-learn==1.9.1 joblib==1.6.0 threadpoolctl==3.8.0 ImageIO==2.38.2 pillow==13.0.0 \
	tifffile==2026.3.3 lazy-loader==0.6 packaging==26.4 pooch==1.9.0 platformdirs==4.14.9 \
	requests==2.34.2 certifi==2026.10.19.post1 charset-normalizer==3.5.3 idna==3.21 \
	urllib3==2.8.0 click==8.5.1 cloudpickle==3.1.3 narwhals==2.29.0 \
	python-dateutil==4.0.0 tzdata==2026.6

$(LAPTRACK_VENV): mk/laptrack.mk
	$(PYTHON) -m venv $(LAPTRACK_VENV)
	$(LAPTRACK_VENV)/bin/python -m pip --disable-pip-version-check install --quiet $(LAPTRACK_PINS)
	$(LAPTRACK_VENV)/bin/python -c "from laptrack import LapTrack"
	touch $(LAPTRACK_VENV)
