"""The documentation site: ``mkdocs build --strict`` (mkdocs.yml) passes with no warning (a
broken link or anchor, a page missing from the navigation), the generated command reference
holds every command's ``--help`` exactly as the console script prints it, the API reference
every public name, and the page map keeps one definitions page and at most one evidence
page per subject."""

from __future__ import annotations

import doctest
import html
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, built_once, missing_reference

DOCS = REPO / "docs"
SPEC = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
hooks = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(hooks)


def _build(folder: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(REPO / "mkdocs.yml"), "--site-dir", str(folder / "site")],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=600)
    return {"code": done.returncode, "log": done.stdout + done.stderr, "site": folder / "site"}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    for module in ("mkdocs", "material", "mkdocstrings_handlers.python"):
        if importlib.util.find_spec(module) is None:  # make test installs the docs extra
            missing_reference(f"{module} (the docs extra: pip install -e '.[docs]')")
    return built_once(tmp_path_factory, "docs-site", _build)


def test_the_site_builds_with_no_warning(site):
    warnings = [line for line in site["log"].splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert site["code"] == 0 and not warnings, site["log"][-3000:]


def code_blocks(page: Path) -> list[str]:
    """The text of every code block of a built page, as a reader copies it."""
    blocks = re.findall(r"<pre[^>]*>(.*?)</pre>", page.read_text(encoding="utf-8"), re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "", block)).strip("\n") for block in blocks]


def console_help(path: tuple[str, ...]) -> str:
    """``trackverify <path> --help`` from the console entry point on an 80-column terminal."""
    env = {**os.environ, "COLUMNS": str(hooks.WIDTH), "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run([sys.executable, "-m", "trackverify", *path, "--help"], env=env,
                          capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.rstrip()


def listed_commands(help_text: str) -> list[str]:
    """The command names of a help text's ``Commands:`` section."""
    section = help_text.split("\nCommands:\n", 1)[1] if "\nCommands:\n" in help_text else ""
    return [line.split()[0] for line in section.splitlines() if re.match(r"^  \S", line)]


def test_every_command_help_is_on_the_commands_page(site):
    paths = hooks.command_paths()
    blocks = code_blocks(site["site"] / "reference" / "commands" / "index.html")
    assert len(blocks) == len(paths)  # one section per command, none left from an old one
    for path in paths:
        shown = console_help(path)
        assert shown.startswith("Usage: trackverify"), path
        assert shown in blocks, f"trackverify {' '.join(path)} --help differs from the page"
        # every command a group's help lists has its own section
        for name in listed_commands(shown):
            assert (*path, name) in paths, (path, name)


def test_the_command_tree_holds_the_lazy_families_and_the_subcommands():
    from trackverify.cli.app import FAMILIES, cli

    paths = hooks.command_paths()
    assert {(name,) for name in [*FAMILIES, *cli.commands]} <= set(paths)
    # the audit's subcommands, which `trackverify audit -h` (the audit's own help) leaves out
    assert {("audit", "sample"), ("audit", "estimate"), ("andi", "score")} <= set(paths)
    assert ("audit", "tracks") not in paths  # the hidden default is `trackverify audit` itself


def test_every_public_name_is_on_the_api_page(site):
    import trackverify

    page = (site["site"] / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    documented = dict(hooks.public_api())
    assert set(documented) == set(trackverify.__all__) - {"__version__"}
    for name, where in documented.items():
        assert f'id="{where}"' in page, name
        assert f"trackverify.{name}" in page, name


def test_the_public_docstring_examples_run():
    finder, runner = doctest.DocTestFinder(recurse=False), doctest.DocTestRunner()
    import trackverify

    for name, where in hooks.public_api():
        obj = getattr(trackverify, name)
        obj = getattr(obj, name) if type(obj).__name__ == "module" else obj
        for test in finder.find(obj, name, module=sys.modules[obj.__module__]):
            result = runner.run(test)
            assert result.failed == 0, f"{where}: a docstring example fails"


def definitions_page(subject: str) -> Path | None:
    """The page that defines ``subject``: the reference's, else a development page of
    ``docs/`` (architecture, testing), else the guide that defines it (the audit's)."""
    for folder in (DOCS / "reference", DOCS, DOCS / "guide"):
        if (folder / f"{subject}.md").is_file():
            return folder / f"{subject}.md"
    return None


def test_one_definitions_page_and_at_most_one_evidence_page_per_subject():
    reference = {p.stem for p in (DOCS / "reference").glob("*.md")}
    development = {p.stem for p in DOCS.glob("*.md")} - {"README"}
    assert development & reference == set(), "a subject defined in two places"
    for evidence in sorted((DOCS / "evidence").glob("*.md")):
        if evidence.stem == "README":
            continue
        home = definitions_page(evidence.stem)
        assert home is not None, f"evidence/{evidence.name}: no definitions page of its name"
        back = os.path.relpath(home, evidence.parent)
        assert f"]({back}" in evidence.read_text(encoding="utf-8"), \
            f"evidence/{evidence.name} does not link {back}"
        there = os.path.relpath(evidence, home.parent)
        assert f"]({there}" in home.read_text(encoding="utf-8"), \
            f"{home.relative_to(DOCS)} does not link {there}"


MENTION = re.compile(r"(?<![\w/.-])docs/[\w./-]+\.(?:md|toml|png|svg)")


def test_every_docs_path_the_code_names_exists():
    # error messages, docstrings and help texts that send a reader to a page
    listed = subprocess.run(["git", "ls-files", "src", "tests", "benchmarks", "mk", "Makefile",
                             "pyproject.toml", "README.md", "docs"], cwd=REPO,
                            capture_output=True, text=True, check=True).stdout.split()
    missing = []
    for name in listed:
        path = REPO / name
        if path.suffix not in {".py", ".md", ".toml", ".mk", ".txt", ""} or not path.is_file():
            continue
        for mention in MENTION.findall(path.read_text(encoding="utf-8", errors="replace")):
            if not (REPO / mention).exists():
                missing.append(f"{name}: {mention}")
    assert not missing, missing
