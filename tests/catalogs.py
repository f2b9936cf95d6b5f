"""Small synthetic catalogs for planner and detection tests (the shapes of compat-matrix/ and rules/)."""

from __future__ import annotations

from scanner.components.catalog import Catalog, catalog_from_documents

SOURCE = "https://example.org/compat"


def release(version: str, low: str | None, high: str | None, **extra) -> dict:
    support = {"min": low, "max": high} if (low or high) else None
    return {"version": version, "released": None, "kubernetes": support, "source": SOURCE, **extra}


def component(name: str, releases: list[dict], one_minor=True, **detect) -> dict:
    return {"name": name, "title": name.title(), "one_minor_at_a_time": one_minor,
            "one_minor_at_a_time_source": SOURCE, "detect": {"chart_versions": "same", **detect},
            "releases": releases}


def crd_rules(component_name: str, *rules: dict) -> dict:
    return {"component": component_name, "rules": [
        {"id": f"{component_name}/{r['apiVersion']}/{r['kind']}", "deprecated_in": None, "replacement": None,
         "note": None, "source": SOURCE, **r} for r in rules]}


def catalog(components: list[dict], rules: list[dict] = (), notes: list[dict] = ()) -> Catalog:
    return catalog_from_documents(list(components), list(rules), list(notes))


def mesh() -> dict:
    """A CNI that must step one minor at a time, each minor supporting four Kubernetes minors."""
    return component("mesh", [
        release("1.16", "1.27", "1.30"), release("1.17", "1.29", "1.32"), release("1.18", "1.30", "1.33"),
        release("1.19", "1.32", "1.35"), release("1.20", None, None),
    ], charts=[{"name": "mesh", "repositories": ["https://charts.example.org/"]}],
        images=["quay.io/example/mesh"], crd_groups=["mesh.example.org"])


def store() -> dict:
    """Storage whose chart has its own numbering (chart 5.x is app 1.7, 6.x is 1.8...)."""
    return component("store", [
        release("1.7", "1.21", "1.31"),
        release("1.8", "1.25", "1.31"),
        release("1.9", "1.25", "1.33"),
    ], charts=[{"name": "store", "repositories": ["oci://ghcr.io/example/charts"]}],
        chart_versions=[{"chart": "5", "app": "1.7"}, {"chart": "6", "app": "1.8"}, {"chart": "7", "app": "1.9"}],
        kustomize_urls=["github.com/example/store"])


def gitops() -> dict:
    """A GitOps tool that may skip minors; its 2.9 drops an API version."""
    return component("gitops", [
        release("2.4", "1.29", "1.31"), release("2.5", "1.30", "1.32"), release("2.6", "1.31", "1.33"),
        release("2.8", "1.33", "1.35"), release("2.9", "1.34", "1.36"),
    ], one_minor=False, charts=[{"name": "gitops"}], crd_groups=["image.gitops.example.org"])
