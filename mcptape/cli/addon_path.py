"""`mcptape addon-path`: where the mitmproxy addon lives, for `mitmdump -s`."""

from __future__ import annotations

from pathlib import Path

import click

from .options import quiet_option

ADDON = Path(__file__).resolve().parent.parent / "capture" / "mitm_addon.py"
"""The addon file; found without importing it (importing it imports mitmproxy)."""


@click.command("addon-path")
@quiet_option("the path is the output: it stays")
def addon_path(quiet: bool = False) -> None:
    """Print the absolute path of mcptape's mitmproxy addon.

    For people who run mitmproxy themselves: as a forward proxy, with TLS
    interception of remote servers, or next to other addons. The addon writes the
    same cassettes as `mcptape record --http`.

    \b
    Reverse proxy in front of a local server (clients connect to :8080):
        mitmdump -s "$(mcptape addon-path)" --set mcptape_cassette=out.jsonl \\
            --mode reverse:http://127.0.0.1:8000 --listen-port 8080
    Forward proxy (clients set HTTPS_PROXY=http://127.0.0.1:8080 and trust
    ~/.mitmproxy/mitmproxy-ca-cert.pem for https servers):
        mitmdump -s "$(mcptape addon-path)" --set mcptape_cassette=out.jsonl

    \b
    Options (--set NAME=VALUE):
        mcptape_cassette          cassette to write (default cassettes/http-<time>.jsonl)
        mcptape_target            server URL for the cassette header
        mcptape_redact            false writes secrets in clear (default true)
        mcptape_redact_keys       more header / query / JSON member names to redact
        mcptape_redact_patterns   more regular expressions to redact
        mcptape_endpoints         the MCP endpoint paths (e.g. /mcp); default: flows that
                                  look like MCP. Other flows pass through unrecorded.
    mitmdump must run from a Python that can import mcptape (the same virtualenv);
    stop it with Ctrl-C and the cassette ends complete. See docs/http-capture.md.
    """
    click.echo(str(ADDON))
