"""The 2019 chart collection (../shared/corpora/helm-charts-2019, 277 real charts) scanned whole with
the real helm and --all-templates: every finding's line lies inside its file, in its own object; the
charts helm cannot render and the templates their values switch off are still read."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest

from conftest import run_kubehop, shared_or_skip, tool_or_skip

_SEPARATOR = re.compile(r"^---(\s|$)")
_KIND = re.compile(r"^\s*kind:\s*[\"']?([^\s\"']+)")


@pytest.fixture(scope="module")
def corpus_report(tmp_path_factory) -> dict:
    stable = shared_or_skip("corpora/helm-charts-2019/stable")
    env = {"KUBEHOP_HELM": tool_or_skip("helm"), "KUBEHOP_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))}
    charts = sorted(str(p.parent) for p in stable.glob("*/Chart.yaml"))
    proc = run_kubehop("scan", "--format", "json", "--target", "1.36", "--all-templates", *charts, env=env)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()[-3000:]
    return json.loads(proc.stdout)


@cache
def lines(path: str) -> list[str]:
    return Path(path).read_text(encoding="utf-8", errors="replace").split("\n")


def document_kinds(path: str, line: int) -> set[str] | None:
    """The kinds written in the `---` document holding `line`; None when a template action writes it."""
    text = lines(path)
    begin = line - 1
    while begin > 0 and not _SEPARATOR.match(text[begin - 1]):
        begin -= 1
    end = line
    while end < len(text) and not _SEPARATOR.match(text[end]):
        end += 1
    kinds = {m.group(1) for t in text[begin:end] if (m := _KIND.match(t))}
    return None if not kinds or any("{{" in k for k in kinds) else kinds


def test_every_finding_lies_inside_its_file_in_its_own_object(corpus_report):
    findings = corpus_report["findings"]
    assert len(findings) > 250
    for finding in findings:
        path, line = finding["file"], finding["line"]
        assert Path(path).is_file(), finding
        assert 1 <= line <= len(lines(path)), finding
        if path.endswith((".yaml", ".yml")):
            kinds = document_kinds(path, line)
            assert kinds is None or finding["object"]["kind"] in kinds, (finding, kinds)


def test_charts_helm_cannot_render_are_read_as_text_not_input_problems(corpus_report):
    failed = {u["file"] for u in corpus_report["unrendered"] if "helm could not render it" in u["reason"]}
    assert len(failed) > 10  # most of the 74 of old rendered once their missing dependencies were switched off
    assert not [d for d in corpus_report["diagnostics"] if "helm could not render" in d["message"]]
    read = {f["file"] for f in corpus_report["findings"] if "(helm could not render it)" in (f["via"] or "")}
    assert len(read) > 25  # templates with a removed API that a failed render would hide
    assert all(any(path.startswith(chart + "/") for chart in failed) for path in read)


def test_templates_switched_off_by_default_values_are_latent_warnings(corpus_report):
    latent = [f for f in corpus_report["findings"] if "latent" in (f["via"] or "")]
    assert len({f["file"] for f in latent}) > 200
    assert {f["severity"] for f in latent} == {"warning"}


def test_umbrella_charts_render_without_the_dependencies_they_do_not_vendor(corpus_report):
    missing = [u for u in corpus_report["unrendered"] if u["reason"].startswith("dependency ")]
    assert len({u["file"] for u in missing}) > 40 and all(u["file"].endswith("requirements.yaml") for u in missing)
    rendered = {f["file"].split("/templates/")[0] + "/requirements.yaml" for f in corpus_report["findings"]
                if "read as text" not in (f["via"] or "")}
    assert len(rendered & {u["file"] for u in missing}) > 20
