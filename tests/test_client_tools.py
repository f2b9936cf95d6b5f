"""Client tools in the tree, checked per hop (issue 25): kubectl pinned outside one minor of the API
server the hop brings (the seeds' toolbox: kubectl 1.31.4 against a 1.36 cluster), helm outside
its support policy's range, a flux CLI whose own Flux release does not support the hop; each a
warning at its pin, at the first hop where it leaves the window."""

from __future__ import annotations

import json

from conftest import FIXTURES, REPO, invoke

TREE = FIXTURES / "cluster-config" / "tree"


def tools(*args: str) -> dict[tuple[str, int], dict]:
    done = invoke("scan", "--no-config", "--no-render", "--format", "json", *args)
    assert done.returncode in (0, 1, 3), done.stderr
    return {((REPO / f["file"]).resolve().relative_to(TREE).as_posix(), f["line"]): f
            for f in json.loads(done.stdout)["findings"] if f["rule"].startswith("client-tool/")}


def test_the_seed_toolbox_kubectl_leaves_the_skew_window_at_the_second_hop():
    """kubectl 1.31.4 with a 1.31 cluster: fine at 1.32, outside from 1.33 (the seeds bumped it to 1.36.4)."""
    found = tools("--from", "1.31", "--target", "1.36", str(TREE / "infra"), str(TREE / "ci"))
    kubectl = {where: f for where, f in found.items() if f["object"]["name"].startswith("kubectl")}
    assert set(kubectl) == {("infra/devcontainer/versions.env", 2), ("ci/versions.env", 1)}
    for finding in kubectl.values():
        assert (finding["rule"], finding["severity"], finding["breaks_in"]) == \
            ("client-tool/kubectl-skew", "warning", "1.33")
        assert "move it to 1.32 or 1.33 for the hop to 1.33" in finding["message"]
        assert finding["source"] == "https://kubernetes.io/releases/version-skew-policy/#kubectl"


def test_helm_and_flux_pins_leave_their_supported_range_at_the_first_hop_past_it():
    found = tools("--from", "1.31", "--target", "1.36", str(TREE / "infra"))
    helm, flux = found[("infra/devcontainer/versions.env", 3)], found[("infra/devcontainer/versions.env", 4)]
    assert (helm["rule"], helm["breaks_in"]) == ("client-tool/unsupported", "1.32")
    assert "helm 3.16.4 supports Kubernetes 1.28 to 1.31, not 1.32" in helm["message"]
    assert "(helm 3.17 to 4.1)" in helm["message"]  # 3.17-3.20 and 4.0-4.1 reach 1.32
    assert (flux["rule"], flux["breaks_in"]) == ("client-tool/unsupported", "1.32")
    assert flux["message"].startswith("flux CLI 2.4.0 installs Flux 2.4")
    assert "move the CLI to 2.5 or later" in flux["message"]


def test_every_place_a_tree_pins_a_client_is_read():
    found = tools("--target", "1.36", str(TREE))  # from 1.26: the tree's own version variables
    assert {where: (f["object"]["name"], f["breaks_in"], f["severity"]) for where, f in found.items()} == {
        # a CronJob's kubectl image: 1.25 fits 1.26, not 1.27
        ("apps/maintenance/restart.yaml", 16): ("kubectl v1.25.4", "1.27", "warning"),
        # a GitHub Actions step of a job that diffs against the cluster: 1.27.3 is a minor ahead of 1.26,
        # fits 1.28, not 1.29
        (".github/workflows/validate.yaml", 12): ("kubectl v1.27.3", "1.29", "warning"),
        # .tool-versions: kubectl 1.28 is two minors ahead of 1.26 already; helm 4.3 is past the policy's table
        (".tool-versions", 1): ("kubectl 1.28.2", "1.26", "warning"),
        (".tool-versions", 2): ("helm 4.3.0", "1.27", "notice"),
        # the toolbox is five minors ahead of a 1.26 cluster already
        ("infra/devcontainer/versions.env", 2): ("kubectl 1.31.4", "1.26", "warning"),
        ("ci/versions.env", 1): ("kubectl 1.31.4", "1.26", "warning"),
        ("infra/devcontainer/versions.env", 3): ("helm 3.16.4", "1.26", "warning"),  # 1.28-1.31
        ("infra/devcontainer/versions.env", 4): ("flux 2.4.0", "1.27", "warning"),
    }


def test_tool_version_files_of_other_formats(tmp_path):
    (tmp_path / ".mise.toml").write_text('[tools]\n"aqua:kubernetes/kubectl" = "1.29.0"\nhelm = "latest"\n')
    (tmp_path / "aqua.yaml").write_text("registries:\n  - type: standard\n    ref: v4.200.0\npackages:\n"
                                        "  - name: kubernetes/kubectl@v1.30.1\n  - name: helm/helm@v3.15.2\n")
    (tmp_path / ".devcontainer").mkdir()
    (tmp_path / ".devcontainer" / "devcontainer.json").write_text(
        '{"name": "ops", "features": {"ghcr.io/devcontainers/features/kubectl-helm-minikube:1": '
        '{"version": "1.29.4", "helm": "3.14.0", "minikube": "none"}}}\n')
    (tmp_path / "Dockerfile").write_text("FROM alpine:3.20\nARG KUBECTL_VERSION=1.30.0\nRUN echo $KUBECTL_VERSION\n")
    done = invoke("scan", "--no-config", "--no-render", "--format", "json", "--from", "1.30", "--target", "1.33",
                  str(tmp_path))
    found = {(f["file"].rsplit("/", 1)[-1], f["line"], f["object"]["name"], f["breaks_in"])
             for f in json.loads(done.stdout)["findings"]}
    assert found == {
        (".mise.toml", 2, "kubectl 1.29.0", "1.31"),
        ("aqua.yaml", 5, "kubectl v1.30.1", "1.32"),
        ("aqua.yaml", 6, "helm v3.15.2", "1.31"),
        ("devcontainer.json", 1, "kubectl 1.29.4", "1.31"),
        ("devcontainer.json", 1, "helm 3.14.0", "1.30"),  # 3.14 supports up to 1.29: outside already
        ("Dockerfile", 2, "kubectl 1.30.0", "1.32"),
    }


def test_a_mise_file_that_is_not_toml_is_named_and_the_scan_goes_on(tmp_path):
    (tmp_path / ".mise.toml").write_text('[tools\nkubectl = "1.29"\n')
    (tmp_path / ".tool-versions").write_text("kubectl 1.29.1\n")
    done = invoke("scan", "--no-config", "--no-render", "--format", "json", "--from", "1.30", "--target", "1.33",
                  str(tmp_path))
    report = json.loads(done.stdout)
    (problem,) = report["diagnostics"]
    assert problem["level"] == "warning" and "not TOML" in problem["message"]
    assert [f["object"]["name"] for f in report["findings"]] == ["kubectl 1.29.1"]


def test_without_a_current_minor_the_pins_are_held_against_the_target_alone(tmp_path):
    (tmp_path / "versions.env").write_text("KUBECTL_VERSION=1.34.2\n")
    found = {f["breaks_in"] for f in json.loads(invoke(
        "scan", "--no-config", "--no-render", "--format", "json", "--target", "1.36",
        str(tmp_path)).stdout)["findings"]}
    assert found == {"1.36"}
    assert not json.loads(invoke("scan", "--no-config", "--no-render", "--format", "json", "--target", "1.35",
                                 str(tmp_path)).stdout)["findings"]


def test_every_finding_carries_its_move_in_fix_and_not_in_its_message(tmp_path):
    """What clears a finding is Finding.fix, not words at the end of its message; each way a pin leaves
    its window (the fixture tree from 1.26 and from 1.31, a helm of the policy's table from before 3.10,
    outside the 1.31 cluster already, a flux release the data does not list)."""
    from scanner.checks import client_tools as ct
    from scanner.scan import ScanOptions, scan
    from scanner.versions import parse_minor

    (tmp_path / "versions.env").write_text("HELM_VERSION=3.9.0\nFLUX_VERSION=2.99.0\n")
    findings = []
    for current, paths in (("1.26", [TREE]), ("1.31", [TREE / "infra", TREE / "ci", tmp_path])):
        result = scan([str(p) for p in paths], target=parse_minor("1.36"), current=parse_minor(current),
                      options=ScanOptions(render=False))
        findings += [f for f in result.findings if f.rule_id.startswith("client-tool/")]
    assert {f.rule_id for f in findings} == {ct.SKEW, ct.UNSUPPORTED, ct.UNKNOWN}
    assert {f.name for f in findings} >= {"helm 3.9.0", "flux 2.99.0", "flux 2.4.0", "helm 4.3.0"}
    for finding in findings:
        assert finding.fix, finding
        assert finding.fix not in finding.message, finding
        assert finding.text == f"{finding.message}; {finding.fix}"
    fixes = {(f.name, str(f.breaks_in)): f.fix for f in findings}
    assert fixes[("kubectl 1.31.4", "1.33")] == \
        "move it to 1.32 or 1.33 for the hop to 1.33, and along with each later hop"
    assert fixes[("flux 2.4.0", "1.32")] == "move the CLI to 2.5 or later with the Flux it installs"
    assert fixes[("helm 3.16.4", "1.32")] == "move it to a release that supports 1.32 (helm 3.17 to 4.1)"
    (old,) = [f for f in findings if f.name == "helm 3.9.0"]  # the table's 3.9.x row: 1.21 to 1.24
    assert old.message.startswith("helm 3.9.0 supports Kubernetes 1.21 to 1.24, not the 1.31 cluster of today")
