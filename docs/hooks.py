"""MkDocs hooks of the documentation site (mkdocs.yml): the pages generated at build time.

- ``reference/commands.md``: every command and subcommand of ``trackverify`` (the families
  that ``trackverify.cli.app.LazyGroup`` imports on first use included), each section the
  command's own ``--help`` as an 80-column terminal prints it, so the page and the help
  cannot disagree (tests/test_docs_site.py compares them with the real console script).
- ``reference/api.md``: every public name of ``trackverify.__all__``, rendered by
  mkdocstrings from its docstring where it lives.

The site documents the source tree beside mkdocs.yml (``src/`` is put first on the path),
whatever version of trackverify is installed.
"""

from __future__ import annotations

import importlib
import re
import sys
import types
from pathlib import Path

from markdown import Extension
from markdown.preprocessors import Preprocessor

#: The terminal width the command reference is printed at (click wraps to two columns less).
WIDTH = 80
COMMANDS = "<!-- the commands: docs/hooks.py -->"
API = "<!-- the public API: docs/hooks.py -->"


#: The docstrings' reStructuredText roles (``:func:`audit```) and literal-block colons
#: (``Example::``), which Markdown would print as they are.
ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|exc|obj):`~?")
LITERAL = re.compile(r"(\S)::$")


class _Docstrings(Preprocessor):
    def run(self, lines):
        return [LITERAL.sub(r"\1:", ROLE.sub("`", line)) for line in lines]


class DocstringMarkup(Extension):
    """Reads the docstrings' reStructuredText markup as Markdown: a role is its code span,
    ``Example::`` a colon (its indented block is a code block in either)."""

    def extendMarkdown(self, md):
        md.preprocessors.register(_Docstrings(md), "docstring_markup", 5)


def on_config(config):
    sys.path.insert(0, str(Path(config.config_file_path).parent / "src"))
    config.markdown_extensions.append(DocstringMarkup())
    return config


def command_paths() -> list[tuple[str, ...]]:
    """Every command a user can type, as its words after ``trackverify``, groups before
    their commands, in the order ``-h`` lists them. A hidden command (``audit``'s default,
    whose help is ``trackverify audit -h``) is its group's."""
    import click

    from trackverify.cli.app import cli

    paths = []

    def walk(command: click.Command, path: tuple[str, ...], parent) -> None:
        ctx = click.Context(command, info_name=path[-1] if path else "trackverify", parent=parent)
        paths.append(path)
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if not sub.hidden:
                    walk(sub, (*path, name), ctx)

    walk(cli, (), None)
    return paths


def help_text(path: tuple[str, ...]) -> str:
    """``trackverify <path> --help`` as printed on a ``WIDTH``-column terminal."""
    from click.testing import CliRunner

    from trackverify.cli.app import cli

    # click leaves a terminal's last two columns unused; a width given outright it fills
    result = CliRunner().invoke(cli, [*path, "--help"], prog_name="trackverify",
                                terminal_width=WIDTH - 2)
    if result.exit_code != 0:
        raise RuntimeError(f"trackverify {' '.join(path)} --help failed: {result.output}")
    return result.output.rstrip()


def commands_markdown() -> str:
    sections = []
    for path in command_paths():
        title = " ".join(("trackverify", *path))
        sections.append(f"## {title}\n\n```text\n{help_text(path)}\n```\n")
    return "\n".join(sections)


def public_api() -> list[tuple[str, str]]:
    """``(public name, where it lives)`` for every callable or class of
    ``trackverify.__all__``, in that order."""
    import trackverify

    found = []
    for name in trackverify.__all__:
        obj = getattr(trackverify, name)
        if isinstance(obj, types.ModuleType):  # a subpackage named like its function
            obj = getattr(obj, name)
        if isinstance(obj, (types.FunctionType, type)):
            found.append((name, f"{obj.__module__}.{obj.__qualname__}"))
    return found


def api_markdown() -> str:
    api = public_api()
    table = "\n".join(f"| `trackverify.{name}` | [`{where}`](#{where}) |" for name, where in api)
    entries = "\n\n".join(f"::: {where}" for _, where in api)
    return f"| name | where it lives |\n|---|---|\n{table}\n\n{entries}\n"


def on_page_markdown(markdown, page, config, files):
    if COMMANDS in markdown:
        importlib.invalidate_caches()
        markdown = markdown.replace(COMMANDS, commands_markdown())
    if API in markdown:
        markdown = markdown.replace(API, api_markdown())
    return markdown
