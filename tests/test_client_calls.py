"""Clients still calling removed APIs (issue 25): `--cluster-state` reads the API server's metrics
(kubectl get --raw /metrics) and an audit log (JSON lines): a deprecated API something still
requests is a blocker at the hop that removes it, naming the callers the audit log names, unless
the tree holds objects of that API (then the object is the finding, where it is written)."""

from __future__ import annotations

import json

from conftest import FIXTURES, invoke

DUMPS = FIXTURES / "cluster-config" / "dumps"
EMPTY_TREE = FIXTURES / "cluster-config" / "tree" / "agent"  # no Kubernetes object, no pin of a client


def scan(*args: str) -> dict:
    done = invoke("scan", "--no-config", "--no-render", "--format", "json", *args)
    assert done.returncode in (0, 1, 3), done.stderr
    return json.loads(done.stdout)


def calls(report: dict) -> dict[str, dict]:
    return {f"{f['object']['apiVersion']} {f['object']['kind']}": f for f in report["findings"]
            if f["rule"] == "client-calls/removed-api"}


def test_the_metrics_dump_names_every_deprecated_api_still_requested_with_its_removal_hop():
    report = scan("--target", "1.36", "--cluster-state", str(DUMPS / "metrics.txt"),
                  "--cluster-state", str(DUMPS / "version.json"), str(EMPTY_TREE))
    assert report["from"] == "1.31"
    found = calls(report)
    assert {key: (f["breaks_in"], f["line"], f["severity"]) for key, f in found.items()} == {
        "flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema": ("1.32", 11, "error"),
        "flowcontrol.apiserver.k8s.io/v1beta3 PriorityLevelConfiguration": ("1.32", 12, "error"),
        "resource.k8s.io/v1beta1 ResourceClaim": ("1.36", 13, "error"),
    }  # v1 endpoints: deprecated, no removal; the truncated volumeattributesclasses line: a notice
    flowschemas = found["flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema"]
    assert flowschemas["message"].startswith("something still calls flowcontrol.apiserver.k8s.io/v1beta3 flowschemas "
                                             "(the API server's metrics), and no object of it is in the tree: it "
                                             "stops working at 1.32")
    assert "move it to flowcontrol.apiserver.k8s.io/v1" in flowschemas["message"]
    (notice,) = [d for d in report["diagnostics"] if d["file"].endswith("metrics.txt")]
    assert notice["level"] == "notice" and "1 apiserver_requested_deprecated_apis line" in notice["message"]


def test_the_audit_log_names_the_callers_busiest_first():
    found = calls(scan("--target", "1.36", "--cluster-state", str(DUMPS / "audit.log"),
                       "--cluster-state", str(DUMPS / "version.json"), str(EMPTY_TREE)))
    assert set(found) == {"flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema", "resource.k8s.io/v1beta1 ResourceClaim"}
    message = found["flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema"]["message"]
    assert "(the audit log: 3 requests)" in message
    assert ("called by kube-state-metrics/v2.9.2 (linux/amd64) kubernetes/$Format "
            "(system:serviceaccount:monitoring:kube-state-metrics): 2 requests, "
            "kubectl/v1.29.3 (linux/amd64) kubernetes/6813625 (system:admin): 1 request") in message


def test_the_metrics_and_the_audit_log_together_give_one_finding_per_api_with_its_callers():
    found = calls(scan("--target", "1.36", "--cluster-state", str(DUMPS), str(EMPTY_TREE)))
    assert len(found) == 3
    assert "called by kube-state-metrics" in found["flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema"]["message"]
    assert "an audit log" in found["flowcontrol.apiserver.k8s.io/v1beta3 PriorityLevelConfiguration"]["message"]


def test_an_api_whose_objects_are_in_the_tree_is_reported_at_the_object_not_as_a_caller(tmp_path):
    (tmp_path / "flowschema.yaml").write_text(
        "apiVersion: flowcontrol.apiserver.k8s.io/v1beta3\nkind: FlowSchema\nmetadata:\n  name: gitops\n"
        "spec:\n  priorityLevelConfiguration:\n    name: workload-low\n")
    report = scan("--target", "1.36", "--cluster-state", str(DUMPS / "metrics.txt"),
                  "--cluster-state", str(DUMPS / "version.json"), str(tmp_path))
    assert "flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema" not in calls(report)
    assert "flowcontrol.apiserver.k8s.io/v1beta3 PriorityLevelConfiguration" in calls(report)
    assert any(f["rule"] == "flowcontrol.apiserver.k8s.io/v1beta3/FlowSchema" for f in report["findings"])


def test_the_plan_carries_the_callers_in_the_window_of_the_removal():
    done = invoke("plan", "--no-config", "--no-render", "--format", "json", "--target", "1.36",
                  "--cluster-state", str(DUMPS), str(EMPTY_TREE))
    plan = json.loads(done.stdout)
    windows = {f["object"]: w["to"] for w in plan["windows"] for f in w["findings"]
               if f["rule"] == "client-calls/removed-api"}
    assert windows == {"FlowSchema flowschemas": "1.32",
                       "PriorityLevelConfiguration prioritylevelconfigurations": "1.32",
                       "ResourceClaim resourceclaims": "1.36"}


def test_a_yaml_dump_that_names_the_metric_is_not_read_as_metrics(tmp_path):
    """An alert rule on the metric (kubectl get prometheusrules -A -o yaml) is a YAML dump like any other."""
    dump = tmp_path / "rules.yaml"
    dump.write_text("apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: deprecated\n"
                    "  namespace: monitoring\n  uid: 6b1c2f0e-1111-2222-3333-444455556666\nspec:\n  groups:\n"
                    "    - name: api\n      rules:\n        - alert: DeprecatedAPI\n"
                    "          expr: apiserver_requested_deprecated_apis{removed_release=\"1.32\"} > 0\n")
    report = scan("--target", "1.36", "--cluster-state", str(dump), str(EMPTY_TREE))
    assert not calls(report) and not [d for d in report["diagnostics"] if d["level"] == "error"]


def test_control_characters_of_a_client_name_are_not_printed(tmp_path):
    event = {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "auditID": "x", "verb": "list",
             "user": {"username": "evil"}, "userAgent": "curl/8\u001b[31m\u0007",
             "objectRef": {"resource": "flowschemas", "apiGroup": "flowcontrol.apiserver.k8s.io",
                           "apiVersion": "v1beta3"},
             "annotations": {"k8s.io/deprecated": "true", "k8s.io/removed-release": "1.32"}}
    (tmp_path / "audit.log").write_text(json.dumps(event) + "\n")
    (finding,) = calls(scan("--from", "1.31", "--target", "1.36", "--cluster-state", str(tmp_path / "audit.log"),
                            str(EMPTY_TREE))).values()
    assert "\u001b" not in finding["message"] and "\u0007" not in finding["message"]
    assert "curl/8?[31m? (evil)" in finding["message"]
