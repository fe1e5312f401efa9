# trackverify beside the field's tools, in one environment (.venv-field): trackverify with
# every extra, traccuracy (newest), napari and laptrack, resolved together by pip and checked
# with `pip check`. tests/test_field.py runs the traccuracy parity tests, the empty-result
# cases and the napari reader's tests inside it (traccuracy from the same environment):
# docs/reference/dependencies.md. Rebuilt when pyproject.toml or this file changes.
FIELD_VENV := .venv-field
FIELD_PIP := $(FIELD_VENV)/bin/python -m pip --disable-pip-version-check
FIELD_TOOLS := traccuracy napari laptrack
TEST_DEPS += $(STAMP)/field

$(STAMP)/field: mk/field.mk pyproject.toml
	rm -rf $(FIELD_VENV)
	$(PYTHON) -m venv $(FIELD_VENV)
	$(FIELD_PIP) install --quiet --upgrade pip
	$(FIELD_PIP) install --quiet $(TORCH)
	$(FIELD_PIP) install --quiet --upgrade --upgrade-strategy only-if-needed \
		-e '.[test,all]' $(FIELD_TOOLS)
	$(FIELD_PIP) check
	$(FIELD_VENV)/bin/python -c "import traccuracy.metrics, napari, laptrack, geff, trackverify.napari_plugin.layers"
	mkdir -p $(STAMP) && touch $@
