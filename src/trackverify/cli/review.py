"""``trackverify review``: the command; the page is :func:`trackverify.review.server.make_server`."""

from __future__ import annotations

from pathlib import Path

import click

from trackverify.cli.options import volume_options


@click.command()
@click.argument("audit_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@volume_options(images=True)
@click.option("--reviewer", default=None, metavar="NAME",
              help="Your name, recorded with each decision [the login name].")
@click.option("--second-reviewer", is_flag=True,
              help="Decide the same rows on your own in AUDIT_DIR/review-<reviewer>.csv (made "
                   "from review.csv, decisions empty); `audit estimate` gives the agreement.")
@click.option("--triage", is_flag=True,
              help="Show the audit's verdict, score, stratum, event and registered place, to "
                   "find errors; decisions are recorded as made in triage mode and `audit "
                   "estimate` says so [blind].")
@click.option("--target", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=None, help="Half-width (0.03: 3 points) the page says is reached or not.")
@click.option("--port", type=click.IntRange(0, 65535), default=None,
              help="Port on 127.0.0.1 (0: a free one) [the sheet's last port when free, "
                   "else a free one].")
@click.option("--open/--no-open", "open_browser", default=False,
              help="Open the page in the default browser [--no-open].")
def review(audit_dir, images, reviewer, second_reviewer, triage, target, port, open_browser,
           **volume):
    """Check the observations sampled in AUDIT_DIR/review.csv, one at a time, in a local page.

    Blind by default: the page shows nothing of the audit's judgement. With --images, crops of
    the lab's volumes around each observation and the claimed identity's anchor place;
    without, positions only. Each decision (c correct, w wrong, u unsure, x clears) is
    written to the sheet with the reviewer, the mode, the seconds spent and the time before
    the page moves on; serves on 127.0.0.1 behind the sheet's token until Ctrl-C, one server
    per sheet (docs/guide/review.md).
    """
    from trackverify.review.app import Settings
    from trackverify.review.images import ImageSource
    from trackverify.review.server import make_server
    from trackverify.review.sheet import login_name, second_sheet

    reviewer = reviewer if reviewer is not None else login_name()
    sheet = second_sheet(audit_dir, reviewer).name if second_reviewer else "review.csv"
    settings = Settings(ImageSource.given(images, **volume), triage, reviewer, target, sheet)
    server = make_server(audit_dir, port, settings=settings)
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
