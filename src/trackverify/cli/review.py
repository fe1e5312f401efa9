"""``trackverify review``: the command; the page is :func:`trackverify.review.server.make_server`."""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.argument("audit_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--port", type=click.IntRange(0, 65535), default=None,
              help="Port on 127.0.0.1 (0: a free one) [the folder's last port when free, "
                   "else a free one].")
@click.option("--open/--no-open", "open_browser", default=False,
              help="Open the page in the default browser [--no-open].")
def review(audit_dir, port, open_browser):
    """Check the observations sampled in AUDIT_DIR/review.csv, one at a time, in a local page.

    Each decision (c correct, w wrong, u unsure) is written to review.csv before the page
    moves on; serves on 127.0.0.1 behind the folder's token until Ctrl-C, one server per
    folder (docs/guide/review.md).
    """
    from trackverify.review.server import make_server

    server = make_server(audit_dir, port)
    click.echo(f"review page: {server.url}  (Ctrl-C to stop)")
    if open_browser:
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
