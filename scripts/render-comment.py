#!/usr/bin/env python3
"""Render a kubehop Markdown report as a pull-request comment, to look at it before a reviewer does.

The Markdown goes through cmark-gfm (GitHub's engine: the test extra's `cmarkgfm`), into a page
styled with github-markdown-css, with Mermaid diagrams drawn by Mermaid itself, at the width of a
comment (848 px), in light and dark. Headless Chromium takes a PNG of each and measures what a
reviewer would trip over: tables wider than the comment (a horizontal scrollbar), a diagram scaled
down (its smallest label in pixels), the page's height.

    npm install --prefix /tmp/render mermaid github-markdown-css     # once, outside the repository
    kubehop plan --from 1.31 --format markdown examples/ > /tmp/plan.md
    python scripts/render-comment.py --modules /tmp/render/node_modules --out /tmp/shots /tmp/plan.md

Chromium is Debian's (`apt-get install chromium`) or named by $CHROMIUM. Prints one JSON line of
measurements per picture. Nothing is fetched: the page loads only the local files named here.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import cmarkgfm
from cmarkgfm.cmark import Options

COMMENT_WIDTH = 848  # a comment's body on a pull request's conversation tab, padding included
_MERMAID_BLOCK = re.compile(r'<pre lang="mermaid"><code>(.*?)</code></pre>', re.S)
_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
          "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
          "--allow-file-access-from-files", "--force-device-scale-factor=1"]

_MEASURE = """
<script>
async function kubehopMeasure() {
  const theme = document.body.dataset.theme;
  mermaid.initialize({startOnLoad: false, theme: theme === 'dark' ? 'dark' : 'default'});
  try { await mermaid.run({querySelector: 'pre.mermaid'}); } catch (e) { document.body.dataset.error = String(e); }
  const body = document.querySelector('.markdown-body');
  const tables = [...body.querySelectorAll('table')].map(t => ({width: t.scrollWidth, shown: t.clientWidth}));
  const diagrams = [...body.querySelectorAll('pre.mermaid svg')].map(svg => {
    const natural = svg.viewBox.baseVal.width, shown = svg.getBoundingClientRect().width;
    const sizes = [...svg.querySelectorAll('.nodeLabel, .edgeLabel, text')]
      .map(e => parseFloat(getComputedStyle(e).fontSize)).filter(x => x > 0);
    const scale = natural ? shown / natural : 1;
    return {natural: Math.round(natural), shown: Math.round(shown), scale: +scale.toFixed(2),
            smallest_label_px: sizes.length ? +(Math.min(...sizes) * scale).toFixed(1) : null};
  });
  const metrics = {content_width: body.clientWidth, height: document.documentElement.scrollHeight,
                   widest_table: Math.max(0, ...tables.map(t => t.width)),
                   tables_scrolling: tables.filter(t => t.width > t.shown + 1).length,
                   diagrams, error: document.body.dataset.error || null};
  document.getElementById('kubehop-metrics').textContent = JSON.stringify(metrics);
}
kubehopMeasure();
</script>
"""


def page(markdown: str, theme: str, modules: Path) -> str:
    body = cmarkgfm.github_flavored_markdown_to_html(markdown, Options.CMARK_OPT_UNSAFE
                                                     | Options.CMARK_OPT_GITHUB_PRE_LANG)
    body = _MERMAID_BLOCK.sub(lambda m: f'<pre class="mermaid">{m.group(1)}</pre>', body)
    css = modules / "github-markdown-css" / f"github-markdown-{theme}.css"
    background = "#0d1117" if theme == "dark" else "#ffffff"
    return f"""<!doctype html><html><head><meta charset="utf-8">
<link rel="stylesheet" href="{css.as_uri()}">
<style>
  body {{ margin: 0; background: {background}; }}
  .markdown-body {{ box-sizing: border-box; width: {COMMENT_WIDTH}px; padding: 16px; }}
  pre.mermaid {{ background: transparent; text-align: center; }}
  #kubehop-metrics {{ display: none; }}
</style>
<script src="{(modules / 'mermaid' / 'dist' / 'mermaid.min.js').as_uri()}"></script>
</head><body data-theme="{theme}"><article class="markdown-body">{body}</article>
<pre id="kubehop-metrics"></pre>{_MEASURE}</body></html>"""


def chromium() -> str:
    found = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        sys.exit("render-comment: no chromium (apt-get install chromium, or set CHROMIUM)")
    return found


def run(browser: str, html_file: Path, *args: str) -> str:
    with tempfile.TemporaryDirectory(prefix="kubehop-chromium-") as profile:
        done = subprocess.run([browser, *_FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=15000",
                               *args, html_file.as_uri()], capture_output=True, text=True, timeout=300)
    return done.stdout


def render(markdown_file: Path, theme: str, modules: Path, out: Path, browser: str) -> dict:
    html_file = out / f"{markdown_file.stem}-{theme}.html"
    html_file.write_text(page(markdown_file.read_text(encoding="utf-8"), theme, modules), encoding="utf-8")
    dom = run(browser, html_file, "--dump-dom")
    found = re.search(r'<pre id="kubehop-metrics">(.*?)</pre>', dom, re.S)
    metrics = json.loads(html.unescape(found.group(1))) if found and found.group(1) else {"error": "no metrics"}
    png = out / f"{markdown_file.stem}-{theme}.png"
    height = min(int(metrics.get("height") or 2000), 16000)
    run(browser, html_file, f"--screenshot={png}", f"--window-size={COMMENT_WIDTH},{height}")
    return {"file": str(png), "theme": theme, "characters": len(markdown_file.read_text(encoding="utf-8")),
            **metrics}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("markdown", nargs="+", type=Path)
    parser.add_argument("--modules", type=Path, required=True,
                        help="node_modules folder holding mermaid and github-markdown-css")
    parser.add_argument("--out", type=Path, required=True, help="folder for the HTML pages and PNGs")
    parser.add_argument("--theme", choices=["light", "dark", "both"], default="both")
    options = parser.parse_args()
    options.out.mkdir(parents=True, exist_ok=True)
    browser = chromium()
    for markdown_file in options.markdown:
        for theme in (["light", "dark"] if options.theme == "both" else [options.theme]):
            print(json.dumps(render(markdown_file, theme, options.modules.resolve(), options.out, browser)))


if __name__ == "__main__":
    main()
