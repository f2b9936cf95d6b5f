"""A pin means one release (issue 23.3): placeholders are none, pins of different versions stay apart,
a client's version is no server pin, a release the data does not list is unknown in every message, and
every install is judged at the hop where it breaks."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import invoke, write_tree as write

LONGHORN = """
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {{name: longhorn, namespace: longhorn-system}}
spec:
  chart:
    spec:
      chart: longhorn
      version: {version}
      sourceRef: {{kind: HelmRepository, name: longhorn, namespace: flux-system}}
"""


def components(root: Path) -> list[tuple]:
    done = invoke("components", "--format", "json", ".", cwd=root)
    return sorted((c["component"], c["pin"], c["how"], c["file"]) for c in json.loads(done.stdout)["components"])


def scan(root: Path, *args: str) -> dict:
    return json.loads(invoke("scan", "--format", "json", *args, ".", cwd=root).stdout)


def test_a_wrapper_chart_s_own_version_is_no_release_its_app_version_is(tmp_path):
    root = write(tmp_path, {
        # A local wrapper named like a component, versioned 0.0.0 (khuedoan/homelab's system/loki): no Loki pin.
        "system/loki/Chart.yaml": """
            apiVersion: v2
            name: loki
            version: 0.0.0
            dependencies:
              - {name: loki-stack, version: 2.10.1, repository: https://grafana.github.io/helm-charts}
            """,
        # A vendored copy of a component's chart: its appVersion is the release, not its 0.1.0.
        "charts/longhorn/Chart.yaml": """
            apiVersion: v2
            name: longhorn
            version: 0.1.0
            appVersion: v1.7.2
            """,
    })
    assert components(root) == [("loki-stack", "2.10.1", "chart", "system/loki/Chart.yaml"),
                                ("longhorn", "v1.7.2", "vendored", "charts/longhorn/Chart.yaml")]


def test_pins_of_different_versions_are_judged_apart_each_at_its_own_file(tmp_path):
    root = write(tmp_path, {
        "base/longhorn.yaml": LONGHORN.format(version="1.6.1"),
        "overlays/a/longhorn.yaml": LONGHORN.format(version="1.6.2"),
        "overlays/b/longhorn.yaml": LONGHORN.format(version="1.6.2"),
    })
    report = scan(root, "--from", "1.28", "--target", "1.30")
    pins = sorted((f["file"], f["message"].split(" supports")[0].split(" states")[0], tuple(f["remediation"][-1:]))
                  for f in report["findings"] if f["rule"].startswith("component/longhorn/"))
    assert [p[0] for p in pins] == ["base/longhorn.yaml", "overlays/a/longhorn.yaml"]
    assert all("1.6.1" in message for file, message, _ in pins if file.startswith("base"))
    assert all("1.6.2" in message and "1.6.1" not in message for file, message, _ in pins
               if file.startswith("overlays"))
    [overlay] = [f for f in report["findings"] if f["file"] == "overlays/a/longhorn.yaml"]
    assert "also edit overlays/b/longhorn.yaml:8" in overlay["remediation"]
    assert not any("base/" in step for step in overlay["remediation"])
    plan = json.loads(invoke("plan", "--from", "1.28", "--target", "1.30", "--format", "json", ".",
                             cwd=root).stdout)
    assert sorted(c["install"] for c in plan["components"] if c["name"] == "longhorn") == [
        "longhorn@1.6.1", "longhorn@1.6.2"]


def test_a_role_s_client_version_is_no_server_pin(tmp_path):
    root = write(tmp_path, {
        # A role that downloads the velero CLI for the host: velero_version is the client's.
        "ansible/roles/workstation/defaults/main.yml": "velero_version: v1.9.0\ncilium_cli_version: v0.16.0\n",
        "ansible/roles/workstation/tasks/main.yml": """
            - name: Download the velero CLI
              ansible.builtin.get_url:
                url: "https://github.com/vmware-tanzu/velero/releases/download/{{ velero_version }}/velero-{{ velero_version }}-linux-amd64.tar.gz"
                dest: /tmp/velero.tar.gz
            - name: Install it
              ansible.builtin.unarchive: {src: /tmp/velero.tar.gz, dest: /usr/local/bin, remote_src: true}
            """,
        # A role that installs the velero chart with the same variable: a server pin.
        "ansible/roles/backup/defaults/main.yml": "velero_version: 7.2.2\n",
        "ansible/roles/backup/tasks/main.yml": """
            - name: Install velero
              kubernetes.core.helm:
                name: velero
                chart_ref: vmware-tanzu/velero
                chart_version: "{{ velero_version }}"
            """,
    })
    assert components(root) == [("velero", "7.2.2", "variable", "ansible/roles/backup/defaults/main.yml")]


def test_a_release_the_data_does_not_list_is_unknown_in_every_message(tmp_path):
    root = write(tmp_path, {"cert-manager.yaml": """
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: cert-manager, namespace: cert-manager}
        spec:
          chart:
            spec:
              chart: cert-manager
              version: v0.11.0
              sourceRef: {kind: HelmRepository, name: jetstack, namespace: flux-system}
        """})
    report = scan(root, "--from", "1.30", "--target", "1.32")
    texts = [f["message"] for f in report["findings"] if f["rule"].startswith("component/cert-manager/")]
    plan = invoke("plan", "--from", "1.30", "--target", "1.32", ".", cwd=root).stdout
    assert texts and all("no support" not in text and "state support" not in text for text in texts)
    assert "cert-manager 0.11 is a release kubehop has no data on (its range is unknown)" in texts[0]
    assert "0.11 does not state support" not in plan and "0.11 supports unknown" not in plan
    assert "cert-manager 0.11 → 1.7: 1.7 supports 1.18–1.23" in plan


def test_without_a_current_minor_an_install_is_judged_at_the_hop_it_breaks_not_at_the_target(tmp_path):
    root = write(tmp_path, {"longhorn.yaml": LONGHORN.format(version="1.6.2")})
    report = scan(root, "--target", "1.36")
    [blocker] = [f for f in report["findings"] if f["rule"] == "component/longhorn/unsupported"]
    # Longhorn 1.6.2 states 1.21–1.28 (the data): it breaks at the hop to 1.29, whatever the target.
    assert blocker["breaks_in"] == "1.29" and blocker["hop"] == "hop to 1.29"
    assert blocker["remediation"][0] == "before the hop to 1.29: longhorn 1.6.2 → 1.6.4"


ARGO_CHART = """
    apiVersion: argoproj.io/v1alpha1
    kind: Application
    metadata: {{name: argocd, namespace: argocd}}
    spec:
      source: {{repoURL: https://argoproj.github.io/argo-helm, chart: argo-cd, targetRevision: {version}}}
      destination: {{server: https://kubernetes.default.svc, namespace: argocd}}
    """


def _argo_findings(tmp_path: Path, version: str) -> tuple[set, dict]:
    root = write(tmp_path, {"apps/argocd.yaml": ARGO_CHART.format(version=version)})
    report = scan(root, "--from", "1.33", "--target", "1.35")
    found = {(f["rule"], f["severity"], f["hop"]) for f in report["findings"] if f["rule"].startswith("component/argo-cd/")}
    return found, report


def test_a_chart_version_that_names_no_app_patch_is_unknown_where_the_patches_disagree(tmp_path):
    """Chart 9.1.11 is none the data lists (the index ends the line at 9.1.10): it ships some Argo CD 3.2
    patch, and 3.2.0-3.2.3 test 1.30-1.33, 3.2.4 on 1.31-1.34. 1.34 is unknown (a warning, never a
    blocker it may not be); 1.35, which no 3.2 patch tests, blocks."""
    found, report = _argo_findings(tmp_path, "9.1.11")
    assert found == {("component/argo-cd/unknown-support", "warning", "hop to 1.34"),
                     ("component/argo-cd/unsupported", "error", "hop to 1.35")}
    assert report["summary"]["errors"] == 1


def test_a_chart_version_the_data_lists_is_judged_by_the_app_patch_it_ships(tmp_path):
    """Chart 9.1.9 ships 3.2.2 (the repository's index), which tests up to 1.33: 1.34 blocks (3.2.4 is the
    move); before the data listed it, a warning as above."""
    found, _ = _argo_findings(tmp_path, "9.1.9")
    assert ("component/argo-cd/unsupported", "error", "hop to 1.34") in found
    assert not {f for f in found if f[1] == "warning"}
