"""A `${VAR}` placeholder is substituted before the API server sees the value: its schema is not judged.

Flux Kustomizations (postBuild.substitute), clusterctl templates and envsubst trees write
`${CLUSTER_NAME}` where a name pattern, an integer or a list is required (kubernetes-sigs/cluster-api:
97 of 98 schema errors were such placeholders). Values that are wrong as written are still reported.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.conftest import run_kubehop

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
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
              properties:
                clusterName: {type: string, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'}
                replicas: {type: integer}
                images: {type: array, items: {type: string}}
                url: {type: string, pattern: '^(http|https|ssh)://'}
"""


def _scan(tmp_path: Path, spec: str) -> list[tuple[int, str]]:
    (tmp_path / "crd.yaml").write_text(CRD)
    (tmp_path / "widget.yaml").write_text(
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\nspec:\n"
        + textwrap.indent(textwrap.dedent(spec), "  "))
    done = run_kubehop("scan", "--target", "1.36", "--format", "json", str(tmp_path))
    report = json.loads(done.stdout)
    return [(f["line"], f["message"].split(":")[0]) for f in report["findings"] if f["rule"] == "crd/invalid-value"]


def test_placeholders_in_patterned_integer_and_list_fields_are_not_judged(tmp_path):
    spec = """\
        clusterName: '${CLUSTER_NAME}'
        replicas: ${WORKER_MACHINE_COUNT}
        images: '${DOCKER_PRELOAD_IMAGES:-[]}'
        url: '${BOOTSTRAP_GIT_REPOSITORY:=https://example.com/repo}'
        """
    assert _scan(tmp_path, spec) == []


def test_values_wrong_as_written_are_still_reported_beside_placeholders(tmp_path):
    spec = """\
        clusterName: 'Bad_Name'
        replicas: three
        images: '${IMAGES}'
        url: 'https://${HOST}/repo'
        """
    assert _scan(tmp_path, spec) == [(5, "spec.clusterName"), (6, "spec.replicas")]
