"""Files a kustomization in the tree applies as patches are partial objects (sources/kustomize_patches.py).

The CRD schema check reports nothing they leave out (a required field), and nothing of the
strategic-merge directives; what they do set is still checked, and so is their apiVersion.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from scanner.openapi import CrdSchema
from scanner.scan import ScanOptions, scan
from scanner.sources.kustomize.patches import patch_files
from scanner.versions import parse_minor

CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.shop.example.org}
spec:
  group: shop.example.org
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [image, size]
              properties:
                image: {type: string}
                size: {type: string, enum: [small, large]}
                replicas: {type: integer}
                ports:
                  type: array
                  minItems: 1
                  items:
                    type: object
                    required: [name, port]
                    properties:
                      name: {type: string}
                      port: {type: integer}
"""
GADGET = """
apiVersion: shop.example.org/v1
kind: Gadget
metadata: {name: till, namespace: shop}
spec:
  image: till:1.0
  size: small
  ports: [{name: http, port: 8080}]
"""


def tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return tmp_path


def findings(root: Path, target: str = "1.36"):
    result = scan([str(root)], target=parse_minor(target), options=ScanOptions(render=False))
    assert not result.input_errors, result.input_errors
    return [(Path(f.origin.path).relative_to(root).as_posix(), f.origin.line, f.rule_id, f.message)
            for f in result.findings]


def base(extra: dict[str, str] | None = None) -> dict[str, str]:
    return {"base/crd.yaml": CRD, "base/gadget.yaml": GADGET,
            "base/kustomization.yaml": "resources: [crd.yaml, gadget.yaml]\n", **(extra or {})}


def test_a_patch_leaves_what_it_does_not_change_to_its_base(tmp_path):
    root = tree(tmp_path, base({
        "overlay/kustomization.yaml": "resources: [../base]\npatches:\n  - path: more.yaml\n",
        "overlay/more.yaml": """
            apiVersion: shop.example.org/v1
            kind: Gadget
            metadata: {name: till, namespace: shop}
            spec:
              replicas: 3
              ports:
                - {port: 9090, $patch: delete}
              $setElementOrder/ports: [{name: http}]
            """}))
    assert findings(root) == []


def test_what_a_patch_sets_is_still_checked(tmp_path):
    root = tree(tmp_path, base({
        "overlay/kustomization.yaml": "resources: [../base]\npatchesStrategicMerge: [size.yaml]\n",
        "overlay/size.yaml": """
            apiVersion: shop.example.org/v1
            kind: Gadget
            metadata: {name: till, namespace: shop}
            spec:
              size: huge
              colour: red
            """}))
    found = {(path, line, rule) for path, line, rule, _ in findings(root)}
    assert found == {("overlay/size.yaml", 5, "crd/invalid-value"), ("overlay/size.yaml", 6, "crd/unknown-field")}


def test_a_patch_at_a_version_the_cluster_no_longer_serves_is_still_reported(tmp_path):
    root = tree(tmp_path, base({
        "overlay/kustomization.yaml": "resources: [../base, budget.yaml]\npatches:\n  - path: budget-patch.yaml\n",
        "overlay/budget.yaml": """
            apiVersion: policy/v1
            kind: PodDisruptionBudget
            metadata: {name: till, namespace: shop}
            spec: {minAvailable: 1, selector: {matchLabels: {app: till}}}
            """,
        "overlay/budget-patch.yaml": """
            apiVersion: policy/v1beta1
            kind: PodDisruptionBudget
            metadata: {name: till, namespace: shop}
            spec: {minAvailable: 2}
            """}))
    [(path, line, rule, message)] = findings(root)
    assert (path, line, rule) == ("overlay/budget-patch.yaml", 1, "policy/v1beta1/PodDisruptionBudget")


def test_json6902_and_patches_lists_name_patch_files_too(tmp_path):
    root = tree(tmp_path, base({
        "overlay/kustomization.yaml": textwrap.dedent("""\
            resources: [../base]
            patchesJson6902:
              - target: {group: shop.example.org, version: v1, kind: Gadget, name: till}
                path: ops.yaml
            patches:
              - path: replicas.yaml
                target: {kind: Gadget}
            """),
        "overlay/ops.yaml": "- {op: replace, path: /spec/replicas, value: 4}\n",
        "overlay/replicas.yaml": "apiVersion: shop.example.org/v1\nkind: Gadget\nmetadata: {name: any}\n"
                                 "spec: {replicas: 2}\n"}))
    assert findings(root) == []


def test_a_file_also_used_as_a_resource_is_an_object(tmp_path):
    lonely = """
        apiVersion: shop.example.org/v1
        kind: Gadget
        metadata: {name: kiosk, namespace: shop}
        spec: {replicas: 1}
        """
    root = tree(tmp_path, base({
        "overlay/kustomization.yaml": "resources: [../base]\npatches:\n  - path: ../shared/kiosk.yaml\n",
        "other/kustomization.yaml": "resources: [../shared/kiosk.yaml]\n",
        "shared/kiosk.yaml": lonely,
        "loose/kiosk.yaml": lonely}))  # named by no kustomization
    required = {(path, rule) for path, _, rule, message in findings(root) if "required property" in message}
    assert required == {("shared/kiosk.yaml", "crd/invalid-value"), ("loose/kiosk.yaml", "crd/invalid-value")}


def test_names_no_file_can_have_are_no_patches(tmp_path):
    (tmp_path / "kustomization.yaml").write_text('patchesStrategicMerge: ["bad\\0name.yaml", "good.yaml"]\n'
                                                 "patches: [{path: 7}, {path: [a]}, plain]\n")
    assert patch_files([str(tmp_path)]) == {str((tmp_path / "good.yaml").resolve())}


def test_missing_only_is_told_apart_from_wrong(tmp_path):
    schema = CrdSchema({"type": "object", "properties": {"spec": {
        "type": "object",
        "anyOf": [{"required": ["image"]}, {"required": ["digest"]}],
        "properties": {"image": {"type": "string"}, "digest": {"type": "string"},
                       "replicas": {"type": "integer"}}}}})
    [missing] = schema.problems({"spec": {"replicas": 1}})
    assert missing.incomplete
    [wrong] = schema.problems({"spec": {"image": "x", "replicas": "many"}})
    assert not wrong.incomplete


def test_a_helmrelease_patch_is_no_release_of_its_own(tmp_path):
    """fluxcd/flux2-kustomize-helm-example's overlays patch the base HelmRelease's values: the patch
    names no chart, and is not listed as a release kubehop could not render."""
    release = """
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: web, namespace: web}
        spec:
          chart: {spec: {chart: web, version: "1.x", sourceRef: {kind: HelmRepository, name: web}}}
        """
    root = tree(tmp_path, {
        "base/kustomization.yaml": "resources: [release.yaml]\n",
        "base/release.yaml": release,
        "production/kustomization.yaml": "resources: [../base]\npatches: [{path: values.yaml}]\n",
        "production/values.yaml": """
            apiVersion: helm.toolkit.fluxcd.io/v2
            kind: HelmRelease
            metadata: {name: web, namespace: web}
            spec: {values: {replicas: 3}}
            """,
    })
    result = scan([str(root)], parse_minor("1.36"))
    assert [u for u in result.unrendered if "values.yaml" in u.path] == []
    assert [u.path for u in result.unrendered if "release.yaml" in u.path]  # the base is the release
