"""The Markdown reports as GitHub shows them: rendered by cmark-gfm, GitHub's own engine (the
`cmarkgfm` binding), then read as a reviewer's browser reads the HTML: what text shows, what is a
link and where to, what is markup, and whether a table can fit a comment's 848 px."""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO, run_kubehop

cmarkgfm = pytest.importorskip("cmarkgfm")
from cmarkgfm.cmark import Options  # noqa: E402

JOINER = "\u2060"
WRAP = "\0"  # where a <wbr> lets a cell wrap
# What GitHub turns into a mention or an issue reference when it is in the text of a comment.
MENTION = re.compile(r"(?<![\w@#])[@#][A-Za-z0-9]")
# The elements a kubehop report may produce; GitHub keeps them all (its sanitizer drops the rest).
REPORT_ELEMENTS = {"h2", "h3", "p", "strong", "em", "sub", "br", "wbr", "code", "pre", "a", "ul", "li", "input",
                   "table", "thead", "tbody", "tr", "th", "td", "details", "summary", "blockquote"}
# A comment's content box (848 px less its padding), and a generous width of a character in it.
COMMENT_PX, CHAR_PX, CELL_PADDING_PX = 816, 8, 26
# as a reader sees it: the newline it holds is shown as \n (scanner.report.plain), the rest as written
HOSTILE_NAME = "evil|name @team <b>50%</b>, x:y\\n::warning::injected [link](https://example.com)"
TREE_URLS = ("https://example.com", "http://www.evil.example", "https://evil.example")
PRINTABLE_ESCAPE = re.compile(r"\\(?:[ntr]|x[0-9a-f]{2}|u[0-9a-f]{4})")  # as scanner.report.plain writes them


def github_html(markdown: str) -> str:
    """What GitHub makes of a comment (raw HTML kept: GitHub's allow-list has every element kubehop writes)."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown, Options.CMARK_OPT_UNSAFE)


class Page(HTMLParser):
    """The rendered comment as a reader meets it: elements, links, and each piece of text with its ancestors."""

    VOID = {"br", "wbr", "input", "img", "hr"}

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.elements: set[str] = set()
        self.links: list[tuple[str, str]] = []  # (href, text)
        self.texts: list[tuple[str, tuple[str, ...]]] = []
        # table rows, each a list of cell contents: their text, "\n" at a <br>, WRAP at a <wbr>
        self.cells: list[list[str]] = []
        self.stack: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.elements.add(tag)
        if tag == "a":
            self.links.append((dict(attrs).get("href", ""), ""))
        if tag == "tr":
            self.cells.append([])
        if tag in ("td", "th"):
            self.cells[-1].append("")
        if tag in ("br", "wbr") and "td" in self.stack:
            self.cells[-1][-1] += "\n" if tag == "br" else WRAP
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in self.stack:
            while self.stack.pop() != tag:
                pass

    def handle_data(self, data):
        self.texts.append((data, tuple(self.stack)))
        if "a" in self.stack:
            href, text = self.links[-1]
            self.links[-1] = (href, text + data)
        if "td" in self.stack or "th" in self.stack:
            self.cells[-1][-1] += data

    @property
    def visible(self) -> str:
        return "".join(text for text, _ in self.texts)

    def prose(self) -> list[str]:
        """Text outside code and links: where GitHub links mentions and references."""
        return [text for text, within in self.texts if not {"code", "pre", "a"} & set(within)]


def min_width_px(row: list[str]) -> int:
    """The narrowest a row can be drawn: each cell's longest run that cannot wrap (spaces, <br>, <wbr>
    and hyphens let it wrap), at a generous character width, plus the cells' padding."""
    def longest(cell: str) -> int:
        return max((len(run) for run in re.split(r"[\s\0]+|(?<=-)", cell) if run), default=0)

    return sum(longest(cell) * CHAR_PX + CELL_PADDING_PX for cell in row)


def assert_inert(page: Page, markdown: str) -> None:
    """Nothing the tree wrote became markup, a link, a mention or a stray backslash."""
    assert page.elements <= REPORT_ELEMENTS, page.elements - REPORT_ELEMENTS
    for href, text in page.links:
        assert not href.startswith(TREE_URLS) and "%5C" not in href and "\\" not in href, (href, text)
        assert href.startswith("https://"), href
    assert not [t for t in page.prose() if MENTION.search(t)], [t for t in page.prose() if MENTION.search(t)]
    # A backslash shows only as the escape of a character from the tree a log would act on (a newline: \n)
    visible = PRINTABLE_ESCAPE.sub("", page.visible)
    assert "\\" not in visible, [t for t, _ in page.texts if "\\" in PRINTABLE_ESCAPE.sub("", t)]
    assert not re.search(r"(?<!\\)\$[^$\n]+(?<!\\)\$", markdown.replace("`", "")), "a $…$ pair is math on GitHub"


def hostile_tree(root: Path) -> Path:
    """The example platform, plus objects and a file whose names carry Markdown, HTML, links and mentions."""
    shutil.copytree(REPO / "examples", root)
    (root / ".git").mkdir()
    (root / "platform" / "apps" / "odd [x](https:⁄⁄e.com) @ops.yaml").write_text(
        (FIXTURES / "reports" / "apps" / "odd name.yaml").read_text())
    (root / "platform" / "apps" / "more.yaml").write_text(
        "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata:\n"
        "  name: 'www.evil.example https://evil.example/x @everyone #12 *em* ~~s~~ $a$ `t` &amp;'\n"
        "  namespace: web\n")
    return root


def markdown_of(*args: str, cwd: Path) -> str:
    proc = run_kubehop(*args, "--format", "markdown", ".", cwd=cwd)
    assert "Traceback" not in proc.stderr.decode(), proc.stderr.decode()
    return proc.stdout.decode()


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return hostile_tree(tmp_path_factory.mktemp("hostile") / "repo")


@pytest.fixture(scope="module")
def scan_md(tree) -> str:
    return markdown_of("scan", "--from", "1.31", "--target", "1.36", cwd=tree)


@pytest.fixture(scope="module")
def plan_md(tree) -> str:
    return markdown_of("plan", "--from", "1.31", "--target", "1.36", cwd=tree)


# --- snapshots of what GitHub shows ---------------------------------------------------------------

def test_scan_comment_html_snapshot(tmp_path, snapshot):
    shutil.copytree(FIXTURES / "reports", tmp_path, dirs_exist_ok=True)
    (tmp_path / ".git").mkdir()
    markdown = markdown_of("scan", "--from", "1.31", "--target", "1.36", cwd=tmp_path)
    page = Page(github_html(markdown))
    assert_inert(page, markdown)
    assert github_html(markdown) == snapshot


def test_plan_comment_html_snapshot(snapshot):
    markdown = markdown_of("plan", "--from", "1.31", "--target", "1.36", cwd=FIXTURES / "seed002")
    assert_inert(Page(github_html(markdown)), markdown)
    assert github_html(markdown) == snapshot


# --- text from the tree --------------------------------------------------------------------------

@pytest.mark.parametrize("report", ["scan_md", "plan_md"])
def test_text_from_the_tree_renders_as_itself_and_links_nobody(report, request):
    markdown = request.getfixturevalue(report)
    page = Page(github_html(markdown))
    assert_inert(page, markdown)
    shown = page.visible.replace(JOINER, "")
    assert HOSTILE_NAME in shown
    assert "www.evil.example https://evil.example/x @everyone #12 *em* ~~s~~ $a$ `t` &amp;" in shown
    assert "odd [x](https:⁄⁄e.com) @ops.yaml" in shown


def test_urls_kubehop_writes_are_links_that_work(scan_md):
    links = dict(Page(github_html(scan_md)).links)
    # the Flux note cites its upgrade procedure in parentheses: the link ends before the ")"
    assert links["https://github.com/fluxcd/flux2/discussions/5572"] == "https://github.com/fluxcd/flux2/discussions/5572"
    assert [text for href, text in links.items() if href.startswith("https://kubernetes.io/docs/")] \
        and all(text == "source" for href, text in links.items() if href.startswith("https://kubernetes.io/docs/"))


# --- a comment's width and length ----------------------------------------------------------------

@pytest.mark.parametrize("report", ["scan_md", "plan_md"])
def test_tables_can_wrap_within_a_comment(report, request):
    page = Page(github_html(request.getfixturevalue(report)))
    widest = max(page.cells, key=min_width_px)
    assert min_width_px(widest) <= COMMENT_PX, widest


def test_what_breaks_does_not_repeat_the_fix(scan_md):
    rows = [[cell.replace(WRAP, "") for cell in row] for row in Page(github_html(scan_md)).cells if row[0] != "Where"]
    tables = [row for row in rows if row[0] != "Hop"]
    assert tables and all(len(row) == 3 for row in tables)
    for where, breaks, fix in tables:
        assert "; use " not in breaks
        if fix.startswith("use "):  # the replacement is named once, in the Fix column
            assert not re.search(re.escape(fix.split("\n")[0].removeprefix("use ")) + r"\b(?!beta|alpha)", breaks)


def distinct_blockers(n: int) -> str:
    """`n` objects that each break in their own words: a custom resource at a version its CRD does not serve."""
    crd = ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.g%d.example.com}\n"
           "spec:\n  group: g%d.example.com\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n"
           "  versions:\n  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}\n"
           "---\napiVersion: g%d.example.com/v1beta1\nkind: Widget\nmetadata: {name: w, namespace: a}\n")
    return "---\n".join(crd % (k, k, k) for k in range(n))


def test_a_long_report_is_cut_to_a_comment_and_written_whole_beside_it(tmp_path):
    (tmp_path / "many.yaml").write_text(distinct_blockers(400))
    for n in range(80):
        (tmp_path / f"broken-{n:02}.yaml").write_text("a: [\n")
    out = markdown_of("scan", cwd=tmp_path)
    assert len(out.encode("utf-16-le")) // 2 < 65_536
    listed = out.count("<code>many.<wbr>yaml:") + out.count("<code>many.yaml:")
    assert 50 < listed < 400
    assert f"{400 - listed} more findings are not shown here" in out and "--output-file FILE" in out
    assert out.count("- error: `broken-") == 50 and "- … 30 more input problems" in out
    assert out.rstrip().endswith("</sub>")  # the footer, after the input problems, is kept
    done = run_kubehop("scan", "--format", "text", "--report", "markdown=report.md", ".", cwd=tmp_path)
    assert done.returncode == 3
    comment, full = (tmp_path / "report.md").read_text(), (tmp_path / "report.full.md").read_text()
    assert comment == out.replace("write the full report with `--output-file FILE` (it goes to FILE.full.md), "
                                  "or see the JSON report", "the full report is in `report.full.md`, written "
                                  "beside this one")
    assert full.count("does not serve g") == 400 and "cut" not in full.rpartition("### Input problems")[0][-400:]


def test_objects_one_rule_finds_alike_share_a_row(tmp_path):
    """Two thousand Ingresses on a removed version are one problem: one row, their list folded below the
    table (in a comment that must be cut, its first objects and where the rest are); two alike stay two rows."""
    ingress = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: web-%d}\n"
    (tmp_path / "many.yaml").write_text("---\n".join(ingress % n for n in range(2000)))
    (tmp_path / "jobs.yaml").write_text("apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: a}\n---\n"
                                        "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: b}\n")
    done = run_kubehop("scan", "--format", "text", "--report", "markdown=report.md", ".", cwd=tmp_path)
    assert done.returncode == 1, done.stderr.decode()
    comment, full = (tmp_path / "report.md").read_text(), (tmp_path / "report.full.md").read_text()
    assert len(comment.encode("utf-16-le")) // 2 < 65_536 and "This comment is cut" not in comment
    assert comment.splitlines()[2].startswith("❌ **blocked: 1.37 cannot be reached as is** (2002 blockers")
    page = Page(github_html(comment))
    assert_inert(page, comment)
    rows = [[cell.replace(WRAP, "") for cell in row] for row in page.cells
            if row[0] not in ("Where", "Hop") and not row[0].startswith("hop to")]  # the hops' tables only
    shared = [row for row in rows if row[0].startswith("2000 objects in 1 file: Ingress")]
    assert len(shared) == 1 and "extensions/v1beta1 Ingress" in shared[0][1]
    assert sum("CronJob" in row[0] for row in rows) == 2 and len(rows) == 3
    assert "<summary>The 2000 objects of extensions/v1beta1/Ingress</summary>" in comment
    assert comment.count("- `many.yaml:") == 50
    assert "- … 1950 more objects: all of them are in `report.full.md`, written beside this one" in comment
    assert full.count("- `many.yaml:") == 2000 and "more objects" not in full
    assert "- `many.yaml:9:1` Ingress web-2" in full  # each object at its own line


def test_a_report_that_fits_is_written_alone(tmp_path):
    (tmp_path / "a.yaml").write_text("apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: w}\n")
    run_kubehop("scan", "--report", "markdown=r.md", ".", cwd=tmp_path)
    assert (tmp_path / "r.md").exists() and not (tmp_path / "r.full.md").exists()


# --- the plan reads from the top down ------------------------------------------------------------

def test_plan_verdict_and_windows_come_first(plan_md):
    head = plan_md.split("\n### ")[0]
    assert head.splitlines()[2].startswith("❌ **blocked:")
    assert "| Window | Hop | Before the hop | Blockers |" in head and "```mermaid" in head


def test_plan_window_lists_blockers_and_moves_before_the_hop_and_each_move_once(plan_md):
    windows = plan_md.split("\n### ")[1:]
    moves = []
    for window in windows:
        items = [line for line in window.splitlines() if line.startswith("- ")]
        hop = next(n for n, line in enumerate(items) if line.startswith("- [ ] **upgrade the cluster to"))
        assert all(not line.startswith(("- [ ] fix", "- [ ] move", "- [ ] migrate", "- ⛔")) for line in items[hop:])
        moves += [re.search(r"move \*\*(.+?)\*\*", line).group(1) for line in items if line.startswith("- [ ] move")]
    assert moves and len(moves) == len(set(moves))
    # a move is required in the window that lists it; only how early it may land is the reader's choice
    assert "; may land earlier, from W1 (after the hop to 1.32)" in plan_md and "optional" not in plan_md


def test_plan_diagram_sets_text_colours_and_fits(plan_md):
    diagram = plan_md.split("```mermaid\n")[1].split("```")[0]
    classes = re.findall(r"classDef (\w+) (.+)", diagram)
    assert classes and all("color:" in style and "fill:" in style for _, style in classes)
    nodes = re.findall(r'^\s+W\d+\[.*\]:::(\w+)$', diagram, re.M)
    assert nodes and set(nodes) <= {name for name, _ in classes}
    assert "flowchart LR" in diagram and "rankSpacing" in diagram  # five windows fit across a comment


def test_plan_summary_says_what_blocks_and_what_is_to_do():
    """The windows' table names the kinds of objects that block and keeps each hop on one line; the
    diagram says how many steps come before a hop (green: nothing blocks, not nothing to do); a component
    the cluster runs outside its stated range says so."""
    markdown = markdown_of("plan", "--from", "1.31", "--target", "1.36", cwd=FIXTURES / "seed002")
    rows = {row[0]: row for row in Page(github_html(markdown)).cells}
    assert rows["W5"][1] == "1.35\u00a0→\u00a01.36"
    assert rows["W5"][3] == "⛔ 3: 3 objects (ImagePolicy, ImageRepository, ImageUpdateAutomation)"
    assert rows["kubevirt"][2] == "outside its stated range at 1.31–1.33"
    diagram = markdown.split("```mermaid\n")[1].split("```")[0]
    labels = re.findall(r'W\d+\["(.*)"\]', diagram)
    assert len(labels) == 5 and all(re.search(r"<br/>\d+ steps? before$", label) for label in labels), labels


def test_a_long_plan_is_cut_to_a_comment_and_written_whole_beside_it(tmp_path):
    blocker = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: web-%d}\n"
    (tmp_path / "many.yaml").write_text("---\n".join(blocker % n for n in range(1000)))
    done = run_kubehop("plan", "--from", "1.31", "--target", "1.32", "--format", "markdown", "--output-file", "plan.md", ".",
                       cwd=tmp_path)
    assert done.returncode == 1, done.stderr.decode()
    comment, full = (tmp_path / "plan.md").read_text(), (tmp_path / "plan.full.md").read_text()
    assert len(comment.encode("utf-16-le")) // 2 < 65_536 and comment.startswith("## kubehop")
    shown = comment.count("- [ ] fix ")
    assert 50 < shown < 1000 and f"{1000 - shown + 1} more plan items are not shown here" in comment
    assert "the full report is in `plan.full.md`" in comment
    assert full.count("- [ ] fix ") == 1000 and "- [ ] **upgrade the cluster to 1.32**" in full


# --- at scale (issue 26): annotation keys wrap, many windows draw in rows, headings carry their badge ---

APPARMOR = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  template:\n"
            "    metadata:\n      annotations:\n"
            "        container.apparmor.security.beta.kubernetes.io/a-container-with-a-long-name: runtime/default\n"
            "    spec:\n      containers: [{name: a-container-with-a-long-name, image: x}]\n")


def test_a_field_path_into_an_annotation_key_wraps_within_a_comment(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "deploy.yaml").write_text(APPARMOR)
    markdown = markdown_of("scan", "--target", "1.36", cwd=tmp_path)
    assert "annotations" in markdown and "apparmor" in markdown
    page = Page(github_html(markdown))
    widest = max(page.cells, key=min_width_px)
    assert min_width_px(widest) <= COMMENT_PX, widest


def test_a_scan_says_what_to_do_first(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "a.yaml").write_text("apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: nightly}\n")
    (tmp_path / "b.yaml").write_text("apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: web}\n---\n"
                                     "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: api}\n")
    markdown = markdown_of("scan", "--target", "1.36", cwd=tmp_path)
    # the report lists the earliest hop first: its first blocker is where to start
    assert ("**Start with** `b.yaml:1:1` Ingress web (hop to 1.22): use networking.k8s.io/v1; then the table "
            "“Hop to 1.22” (1 more blocker).") in markdown
    assert markdown.index("**Start with**") < markdown.index("### Hop to 1.22")


def test_many_windows_draw_in_rows_and_each_heading_says_its_state(tmp_path):
    (tmp_path / "ing.yaml").write_text("apiVersion: networking.k8s.io/v1beta1\nkind: Ingress\nmetadata: {name: web}\n")
    markdown = markdown_of("plan", "--from", "1.25", "--target", "1.37", cwd=tmp_path)
    diagram = markdown.split("```mermaid\n")[1].split("```")[0]
    rows = re.findall(r'subgraph (R\d+) \[" "\]\n    direction LR\n((?:    .*\n)+?)  end', diagram)
    assert [len(re.findall(r"^    W\d+\[", body, re.M)) for _, body in rows] == [5, 5, 2]
    assert "  R1 --> R2\n  R2 --> R3\n" in diagram
    assert not re.search(r"^  W\d+ --> W\d+", diagram, re.M)  # no edge leaves a row: each keeps left to right
    headings = re.findall(r"^### (W\d+ · .*)$", markdown, re.M)
    assert len(headings) == 12
    assert all(h.endswith(("· ✓ nothing blocks", " warning", " warnings", " blocker", " blockers")) for h in headings)
    assert headings[0].startswith("W1 · 1.25 → 1.26 · ⛔ 1 blocker")  # the Ingress, gone in 1.22
