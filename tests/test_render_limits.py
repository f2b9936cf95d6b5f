"""A chart's render is bounded: output, memory and time, each over its limit an input problem for
that chart alone; the render pool fits the machine's cores and free memory."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from conftest import tool_or_skip
from scanner.rulebook import load_rulebook
from scanner.sources.tools import render_limits
from scanner.sources.helm.render import HelmSettings, render_all, releases_for
from scanner.sources.tools.render_limits import RenderLimits, go_runtime, pool_size
from scanner.versions import Minor

MIB = 1 << 20
GIB = 1 << 30
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  value: {value}\n"
# Each chart's template: what it does to the renderer.
HOSTILE = {
    "repeat": "{{ repeat 4000000 \"x\" | quote }}",  # 4 MB of output from one line
    "doubling": "{{ $s := \"x\" }}{{ range until 64 }}{{ $s = printf \"%s%s\" $s $s }}{{ end }}{{ len $s | quote }}",
    "slow": "{{ range until 30000 }}{{ range until 30000 }}{{ end }}{{ end }}x",  # little output or memory: time
    "fine": "ok",
}


def chart(root: Path, name: str) -> str:
    folder = root / name
    (folder / "templates").mkdir(parents=True)
    (folder / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 1.0.0\n")
    (folder / "templates" / "cm.yaml").write_text(CONFIGMAP.format(name=name, value=HOSTILE[name]))
    return str(folder)


def render(tmp_path: Path, monkeypatch, names: list[str], limits: RenderLimits) -> dict[str, object]:
    helm = tool_or_skip("helm")
    monkeypatch.setenv("KUBEHOP_CACHE_DIR", str(tmp_path / "cache"))
    minor = Minor(1, 30)
    settings = HelmSettings(helm, minor, frozenset(load_rulebook().served.served_at(minor)),
                            limits=limits)
    outcomes = render_all(releases_for([chart(tmp_path, name) for name in names]), settings)
    return {o.release.release: o for o in outcomes}


def test_output_over_the_limit_is_a_problem_for_that_chart_only(tmp_path, monkeypatch):
    outcomes = render(tmp_path, monkeypatch, ["repeat", "fine"], RenderLimits(output=2 * MIB))
    assert outcomes["repeat"].error == "helm printed more than 2 MiB, the most kubehop reads of one render"
    assert outcomes["repeat"].text is None
    assert outcomes["fine"].error is None and "name: fine" in outcomes["fine"].text


def test_the_same_chart_renders_within_a_larger_limit(tmp_path, monkeypatch):
    outcomes = render(tmp_path, monkeypatch, ["repeat"], RenderLimits(output=16 * MIB))
    assert outcomes["repeat"].error is None and len(outcomes["repeat"].text) > 4_000_000


def test_memory_over_the_limit_stops_the_render(tmp_path, monkeypatch):
    """A template that doubles a string 64 times would take exabytes: helm stops at the ceiling."""
    outcomes = render(tmp_path, monkeypatch, ["doubling", "fine"], RenderLimits(memory=2 * GIB, seconds=120))
    assert outcomes["doubling"].error == "helm needed more than 2 GiB of memory, the most kubehop allows one render"
    assert outcomes["fine"].error is None


def test_time_over_the_limit_stops_the_render(tmp_path, monkeypatch):
    """(Alone: on a loaded machine even a small chart may take longer than so short a limit.)"""
    started = time.monotonic()
    outcomes = render(tmp_path, monkeypatch, ["slow"], RenderLimits(seconds=3))
    assert outcomes["slow"].error == "helm did not finish within 3 s"
    assert time.monotonic() - started < 60  # stopped, not run to its end


def test_a_limit_problem_is_not_cached(tmp_path, monkeypatch):
    """Another run (a faster machine, a larger limit) may render it: only helm's own verdict is kept."""
    render(tmp_path, monkeypatch, ["slow"], RenderLimits(seconds=1))
    assert not list((tmp_path / "cache").rglob("*.error"))


def test_a_worker_that_renders_a_chart_of_nothing_after_another_gives_nothing(tmp_path, monkeypatch):
    # A worker's files are used again from one render to the next: a chart whose templates emit nothing
    # calls no post-renderer, and must not be handed what the one before it rendered.
    helm = tool_or_skip("helm")
    monkeypatch.setenv("KUBEHOP_CACHE_DIR", str(tmp_path / "cache"))
    empty = tmp_path / "empty"
    (empty / "templates").mkdir(parents=True)
    (empty / "Chart.yaml").write_text("apiVersion: v2\nname: empty\nversion: 1.0.0\n")
    (empty / "templates" / "cm.yaml").write_text("{{- if .Values.never }}\n" + CONFIGMAP.format(name="x", value=1) +
                                                 "{{- end }}\n")
    minor = Minor(1, 30)
    settings = HelmSettings(helm, minor, frozenset(load_rulebook().served.served_at(minor)), workers=1)
    fine, nothing = render_all(releases_for([chart(tmp_path, "fine"), str(empty)]), settings)
    assert fine.error is None and "name: fine" in fine.text
    assert (nothing.error, nothing.text) == (None, "")


def test_helm_renders_with_its_collector_off_below_a_soft_ceiling_unless_the_user_set_one():
    limits = RenderLimits(memory=3 * GIB)
    assert go_runtime({"PATH": "/bin"}, limits) == {"PATH": "/bin", "GOGC": "off", "GOMEMLIMIT": "1024MiB"}
    assert go_runtime({"GOGC": "50"}, limits) == {"GOGC": "50"}
    assert go_runtime({"GOMEMLIMIT": "2GiB"}, limits) == {"GOMEMLIMIT": "2GiB"}


@pytest.mark.parametrize("cores, free, expected", [
    (2, 24 * GIB, 4),  # two per core
    (2, 4 * GIB, 1),  # a small runner: one render at its ceiling fits
    (32, 256 * GIB, 16),  # never more than 16
    (2, 0, 4),  # the platform does not say: by cores alone
])
def test_pool_fits_cores_and_free_memory(cores, free, expected, monkeypatch):
    monkeypatch.setattr(render_limits, "_free_memory", lambda: free)
    monkeypatch.setattr(render_limits.os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    assert pool_size(RenderLimits(memory=3 * GIB)) == expected
