# Mutation testing of the definition modules (slow; not part of `make test`).
#   make mutate                                   every module in tests/mutation/run.py
#   make mutate MUTATE_MODULES="benchmark/selective.py"     some of them
# Scratch copies and mutmut's results go to build/mutmut/; the score table is printed, and
# surviving mutants not listed in tests/mutation/equivalent.txt are named on stderr.
MUTATE_MODULES ?=
MUTATE_JOBS ?= 1

.PHONY: mutate

$(STAMP)/mutate: $(STAMP)/test
	$(PIP) install --quiet -e '.[test,all,mutate]'
	touch $@

mutate: $(STAMP)/mutate
	nice -n 19 $(BIN)/python tests/mutation/run.py $(MUTATE_MODULES) --jobs $(MUTATE_JOBS)
