"""Reading upgrade orders: role, version or channel, distribution, the line of the field, the cluster."""

from __future__ import annotations

from scanner.orders.read import cluster_pins, clusters, read_orders
from scanner.sources import collect
from scanner.sources.yaml.yamldoc import read_text
from scanner.versions import Minor
from tests.conftest import FIXTURES

ORDERS = FIXTURES / "orders"


def orders_in(*paths):
    return read_orders(collect([str(p) for p in paths]).manifests)


def orders_of(text: str):
    manifests, _ = read_text(text, "orders.yaml")
    return read_orders(manifests)


def test_plans_read_as_their_controller_reads_them():
    server, agent = orders_in(ORDERS / "k3s" / "system-upgrade" / "plans.yaml")
    assert (server.role, agent.role) == ("control-plane", "worker")
    assert (server.version.text, server.minor, server.distro) == ("v1.31.14+k3s1", Minor(1, 31), "k3s")
    assert (server.origin.line, server.origin.column) == (19, 3)  # the line of spec.version
    assert server.prepare is None and agent.prepare.waits_for == "k3s-server"


def test_a_minor_channel_names_the_minor_and_the_distribution():
    server, agent = orders_in(ORDERS / "rke2-channel")
    assert server.version is None and server.minor == Minor(1, 33) and not server.floating
    assert server.distro == "rke2" and server.origin.line == 9  # spec.channel
    [floating] = orders_in(ORDERS / "k3s-floating")
    assert floating.floating and floating.minor is None and floating.distro == "k3s"


def test_knu_and_cluster_api_roles():
    knu = {o.role: o for o in orders_in(ORDERS / "knu")}
    assert knu["control-plane"].version.text == "v1.35.8" and knu["worker"].distro == "kubernetes"
    capi = orders_in(ORDERS / "capi")
    assert [(o.kind.kind, o.role, o.cluster) for o in capi] == [
        ("KubeadmControlPlane", "control-plane", "prod"),  # through the Cluster's controlPlaneRef
        ("MachineDeployment", "worker", "prod"), ("MachinePool", "worker", "prod")]


def test_the_cluster_minor_is_the_newest_control_plane_order_per_cluster():
    [pin] = cluster_pins(orders_in(ORDERS / "knu-skip"))
    assert pin.version.text == "v1.35.8" and pin.origin.line == 25
    pins = cluster_pins(orders_in(ORDERS / "capi-skew"))
    assert sorted(str(p.minor) for p in pins) == ["1.32", "1.33"]  # prod and staging


def test_clusters_by_folder_and_by_prepare(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        text = (ORDERS / "k3s" / "system-upgrade" / "plans.yaml").read_text()
        (tmp_path / name / "plans.yaml").write_text(text if name == "a" else text.replace("v1.31.14", "v1.33.13"))
    groups = clusters(orders_in(tmp_path))
    assert sorted((str(g.newest_control_plane.minor), len(g.workers)) for g in groups) == [("1.31", 1), ("1.33", 1)]


def test_hostile_orders_are_read_without_a_fault():
    orders = orders_of("""\
apiVersion: upgrade.cattle.io/v1
kind: Plan
metadata: {name: odd}
spec:
  version: [v1.31.1]
  nodeSelector: "node-role.kubernetes.io/control-plane"
  prepare: {args: {prepare: server}}
---
apiVersion: yaki.clastix.io/v1alpha1
kind: KubernetesNodeUpgrade
metadata: {name: odd}
spec: {version: 1.99.x, target: {role: Boss}}
---
apiVersion: upgrade.cattle.io/v1
kind: Plan
metadata: {name: empty}
spec: null
""")
    assert [(o.role, o.version, o.minor, o.prepare and o.prepare.waits_for) for o in orders] == [
        (None, None, None, None), (None, None, None, None), (None, None, None, None)]
    assert cluster_pins(orders) == []


def test_the_order_data_obeys_its_schemas_and_is_coherent():
    from scanner import data
    from scanner.orders.version import parse_order_version

    kinds = data.load("rules/upgrade-orders.yaml")["kinds"]
    pairs = [(v, k["kind"]) for k in kinds for v in k["apiVersions"]]
    assert len(pairs) == len(set(pairs))
    assert all(k["writes"] != "none" or k.get("not_written") for k in kinds)
    for distro in data.load("rules/distro-releases.yaml")["distros"]:
        minors = [r["minor"] for r in distro["releases"]]
        assert minors == sorted(minors, key=lambda m: tuple(map(int, m.split(".")))) and len(set(minors)) == len(minors)
        for release in distro["releases"]:
            version = parse_order_version(release["version"])
            assert str(version.minor) == release["minor"] and version.patch is not None
            assert (distro["name"] == "kubernetes") == ("+" not in release["version"])
            assert distro["name"] == "kubernetes" or f"+{distro['name']}" in release["version"]


def test_a_tuppr_kubernetes_upgrade_sets_the_cluster_minor():
    """joryirving/home-ops (and onedr0p/home-ops, szinn/k8s-homelab in the corpus): tuppr's one
    KubernetesUpgrade per cluster was not read, so plan refused the tree ('pins no cluster version')."""
    [order] = orders_in(ORDERS / "tuppr")
    assert (order.kind.family, order.role, order.version.text, order.distro) == (
        "tuppr", "control-plane", "v1.31.4", "kubernetes")
    assert (order.origin.line, order.origin.column) == (10, 5)  # spec.kubernetes.version
    [pin] = cluster_pins([order])
    assert pin is order and pin.minor == Minor(1, 31)
