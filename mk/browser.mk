# System packages of the browser tests (tests/review/test_browser.py, the report layout
# tests): Debian chromium + chromium-driver. `make test` installs them as CI does when this
# machine allows it (root with apt-get); otherwise it prints one line saying what skips and
# how to install them. Checked on every run (phony): nothing is left to a stamp.
TEST_DEPS += browser

.PHONY: browser

browser:
	@if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "make test: installing Debian chromium + chromium-driver for the browser tests"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      chromium chromium-driver >/dev/null; } \
	  || echo "make test: could not install chromium; the browser tests will say why they skip"; \
	else \
	  echo "make test: the browser tests (review page, report layout) skip without Debian chromium + chromium-driver: sudo apt-get install chromium chromium-driver"; \
	fi
