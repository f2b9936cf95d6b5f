"""Flux HelmReleases as scanner.sources.helm.flux reads them, on tests/fixtures/flux-releases."""

from __future__ import annotations

from conftest import FIXTURES
from scanner.sources.helm import flux
from scanner.sources.yaml.yamldoc import read_text

TREE = FIXTURES / "flux-releases"


def releases(allow_network: bool = False) -> flux.FluxCharts:
    path = TREE / "releases.yaml"
    manifests, problems = read_text(path.read_text(encoding="utf-8"), str(path))
    assert problems == []
    return flux.flux_releases(manifests, [str(TREE / "charts" / "web")], allow_network, (str(TREE),))


def test_a_missing_values_from_object_is_said_only_for_a_release_that_renders():
    """joryirving/home-ops: a remote chart without --allow-network is not rendered at all, so its
    valuesFrom ConfigMap missing from the tree is no notice of a render 'without it'."""
    found = releases()
    missing = [n.message for n in found.notes if "valuesFrom" in n.message]
    assert missing == ["Flux HelmRelease shop/web: valuesFrom ConfigMap web-values key values.yaml is not in the "
                       "scanned tree; rendered without it"]
    assert [r.release for r in found.releases] == ["web"]
    assert any("remote; not downloaded" in d.message and "default/remote" in d.message for d in found.not_rendered)
    with_network = releases(allow_network=True)
    assert sorted(n.message.split(":")[0] for n in with_network.notes if "valuesFrom" in n.message) == [
        "Flux HelmRelease default/remote", "Flux HelmRelease shop/web"]


def test_a_release_name_holding_a_flux_variable_is_not_rendered_and_no_input_problem():
    """joryirving/home-ops: `name: home-ops-runner-${CLUSTER}`, filled in by the Flux Kustomization's
    postBuild, was an error ('not one helm accepts') that made the scan exit 3."""
    found = releases(allow_network=True)
    assert not [n for n in found.notes if "${CLUSTER}" in n.message]
    [said] = [d for d in found.not_rendered if "${CLUSTER}" in d.message]
    assert said.level == "notice"
    assert said.message == ("Flux HelmRelease default/runner-${CLUSTER}: release name 'runner-${CLUSTER}' holds "
                            "${CLUSTER}, a variable substituted when the object is applied (Flux postBuild); "
                            "not rendered")
    assert "runner-${CLUSTER}" not in [r.release for r in found.releases]
