"""A client a GitHub Actions job pins is held against the hops only when the job reaches the cluster
kubehop plans (rules/client-tools.yaml `ci_jobs`, sources/cluster/ci_jobs.py): a job that only renders,
lints or packages is bound by no API server's skew (toboshii/home-ops' helm-release-differ pins helm
v3.6.3 to diff `helm template` output), nor is one that talks only to the kind cluster it creates.
A job kubehop cannot read to the end (a script the repository does not hold, an action it does not
know, `curl | bash`) keeps its finding, and says why."""

from __future__ import annotations

import json
import os

import pytest
from conftest import invoke, write_tree

from scanner.ci_rules import CLUSTER, CREDENTIALS, OFFLINE, OWN_CLUSTER, UNDECIDED, ci_rules


def pinned(tree, exits=(0, 1)) -> dict[str, dict]:
    """The client-tool findings of a scan from 1.30 to 1.33, by the pin's file name and line."""
    done = invoke("scan", "--no-config", "--no-render", "--format", "json", "--from", "1.30", "--target", "1.33",
                  str(tree))
    assert done.returncode in exits, done.stderr
    return {f"{os.path.basename(f['file'])}:{f['line']}": f for f in json.loads(done.stdout)["findings"]
            if f["rule"].startswith("client-tool/")}


HELM_DIFFER = """\
    name: Helm Release Differ
    on:
      pull_request:
        paths: ["cluster/**.yaml"]
    jobs:
      helm-release-differ:
        runs-on: ubuntu-latest
        steps:
          - uses: actions/checkout@v3
          - uses: tibdex/github-app-token@v1
            id: generate-token
            with:
              app_id: ${{ secrets.BOT_APP_ID }}
              private_key: ${{ secrets.BOT_APP_PRIVATE_KEY }}
          - uses: actions/checkout@v3
            with:
              ref: main
              path: default
          - name: Install Helm
            uses: azure/setup-helm@v3
            with:
              version: v3.6.3
          - name: Helm Release Differ
            id: diff
            run: |
              diff=$(.github/scripts/helm-release-differ.sh \
                --source-file "default/${{ matrix.file }}" --target-file "${{ matrix.file }}")
              echo "::set-output name=diff::$(echo ${diff})"
          - uses: peter-evans/find-comment@v2
            id: find-comment
            with:
              issue-number: "${{ github.event.pull_request.number }}"
          - uses: peter-evans/create-or-update-comment@v2
            with:
              token: "${{ steps.generate-token.outputs.token }}"
              body: "${{ steps.diff.outputs.diff }}"
"""

DIFFER_SCRIPT = """\
    #!/usr/bin/env bash
    # shellcheck source=/dev/null
    source "$(dirname "${0}")/lib/functions.sh"
    set -o errexit

    _resources() {
        local chart_name=${1}
        helm repo add main "${3}" > /dev/null 2>&1
        pushd "$(mktemp -d)" > /dev/null 2>&1
        helm pull "main/${chart_name}" --untar --version "${2}"
        resources=$(echo "${4}" | helm template "${chart_name}" "${chart_name}" --version "${2}" -f -)
        if [[ -n "${resources}" && ! "${chart_name}" =~ "null" ]]; then
            comments+=( "$(printf 'Chart: `%s`' "${chart_name}")" )
        fi
        popd > /dev/null 2>&1
        helm repo remove main > /dev/null 2>&1
    }
    diff -u /tmp/source_resources /tmp/target_resources > /tmp/diff || true
"""

LIB = """\
    #!/usr/bin/env bash
    check() {
        command -v "${1}" >/dev/null 2>&1 || { echo >&2 "ERROR: ${1} is not installed"; exit 1; }
    }
    chart_name() {
        yq eval .spec.chart.spec.chart "${1}" 2>/dev/null
    }
"""


def test_a_job_that_only_renders_and_diffs_charts_is_not_held_to_the_skew(tmp_path):
    """toboshii/home-ops: its script (and the library it sources from its own folder) runs helm repo,
    pull and template; the job has no kubeconfig: helm v3.6.3 is not judged."""
    write_tree(tmp_path, {".github/workflows/helm-release-differ.yaml": HELM_DIFFER,
                          ".github/scripts/helm-release-differ.sh": DIFFER_SCRIPT,
                          ".github/scripts/lib/functions.sh": LIB,
                          ".tool-versions": "helm 3.6.3\n"})
    found = pinned(tmp_path)
    assert set(found) == {".tool-versions:1"}  # a pin outside workflows is judged as before


def test_the_same_job_with_a_library_that_upgrades_a_release_is_judged(tmp_path):
    write_tree(tmp_path, {".github/workflows/helm-release-differ.yaml": HELM_DIFFER,
                          ".github/scripts/helm-release-differ.sh": DIFFER_SCRIPT,
                          ".github/scripts/lib/functions.sh": LIB + "helm upgrade --install x ./chart\n"})
    (finding,) = pinned(tmp_path).values()
    assert finding["line"] == 22 and finding["object"]["name"] == "helm v3.6.3"
    assert ("job helm-release-differ, which reaches a cluster: .github/scripts/lib/functions.sh:8 runs "
            "`helm upgrade`") in finding["message"]


DEPLOY = """\
    name: deploy
    on:
      push:
        branches: [main]
    jobs:
      deploy-staging:
        runs-on: ubuntu-latest
        environment: staging
        steps:
          - uses: actions/checkout@v4
          - name: Configure kubectl
            uses: azure/setup-kubectl@v4
            with:
              version: v1.28.4
          - name: Set K8s context
            uses: azure/k8s-set-context@v4
            with:
              method: kubeconfig
              kubeconfig: ${{ secrets.KUBE_CONFIG_STAGING }}
          - name: Deploy to staging
            run: |
              kubectl set image deployment/capsule \\
                capsule=ghcr.io/${{ github.repository }}/capsule:${{ github.sha }} -n butterfly
              kubectl rollout status deployment/capsule -n butterfly
"""


def test_a_deploy_job_with_a_cluster_context_is_judged_and_says_why(tmp_path):
    write_tree(tmp_path, {".github/workflows/deploy.yaml": DEPLOY})
    (finding,) = pinned(tmp_path).values()
    assert (finding["rule"], finding["line"], finding["breaks_in"]) == ("client-tool/kubectl-skew", 14, "1.30")
    assert ("GitHub Actions step azure/setup-kubectl of job deploy-staging, which reaches a cluster: step Set K8s "
            "context uses azure/k8s-set-context, which gives the job a cluster's credentials") in finding["message"]


EKS = """\
    name: release
    on: {push: {tags: ["v*"]}}
    permissions: {id-token: write, contents: read}
    jobs:
      publish:
        runs-on: ubuntu-latest
        steps:
          - uses: actions/checkout@v4
          - uses: azure/setup-helm@v4
            with:
              version: v3.12.3
          - uses: aws-actions/configure-aws-credentials@v4
            with:
              role-to-assume: arn:aws:iam::123456789012:role/ci
              aws-region: eu-west-1
          - run: |
              helm package charts/web --destination dist/
              helm push dist/web-*.tgz oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com/charts
"""


def test_cloud_credentials_alone_reach_no_cluster_and_update_kubeconfig_does(tmp_path):
    """helm 3.12 supports 1.24-1.27: outside a 1.30 cluster; but the job only packages and pushes."""
    write_tree(tmp_path, {".github/workflows/release.yaml": EKS})
    assert not pinned(tmp_path)
    deploy = ("          - name: Deploy\n"
              "            run: |\n"
              "              aws eks update-kubeconfig --name prod --region eu-west-1\n"
              "              helm upgrade --install web charts/web -n web\n")
    write_tree(tmp_path, {".github/workflows/release.yaml": EKS + deploy})
    (finding,) = pinned(tmp_path).values()
    assert "step Deploy runs `aws eks update-kubeconfig`, which writes a kubeconfig" in finding["message"]


E2E = """\
    name: e2e
    on: {push: {branches: ["*"]}}
    jobs:
      kubernetes:
        runs-on: ubuntu-latest
        steps:
          - uses: actions/checkout@v4
          - uses: azure/setup-kubectl@v4
            with:
              version: v1.28.4
          - uses: helm/kind-action@v1.14.0
            with:
              cluster_name: flux
              node_image: kindest/node:v1.28.15
          - run: |
              kubectl apply -k clusters/staging
              kubectl -n flux-system wait kustomization/apps --for=condition=ready --timeout=5m
          - name: Debug failure
            if: failure()
            run: kubectl -n flux-system get all
"""


def test_a_job_that_talks_only_to_the_kind_cluster_it_creates_is_not_judged(tmp_path):
    write_tree(tmp_path, {".github/workflows/e2e.yaml": E2E})
    assert not pinned(tmp_path)


def test_a_kubeconfig_secret_in_the_env_makes_a_job_reach_a_cluster(tmp_path):
    """Even when all it runs before is offline: the kubeconfig is there for what it runs."""
    env = "      kubernetes:\n        env:\n          KUBECONFIG: ${{ secrets.PROD_KUBECONFIG }}\n"
    write_tree(tmp_path, {".github/workflows/e2e.yaml": E2E.replace("      kubernetes:\n", env)})
    (finding,) = pinned(tmp_path).values()
    assert "which reaches a cluster: the job's env hands it KUBECONFIG, a kubeconfig" in finding["message"]


FLUX = """\
    name: flux
    on: {pull_request: {}}
    jobs:
      build:
        runs-on: ubuntu-latest
        steps:
          - uses: actions/checkout@v4
          - uses: fluxcd/flux2/action@main
            with:
              version: 2.4.0
          - name: Build
            run: |
              for ks in apps infrastructure; do
                flux build kustomization "$ks" --path "./kubernetes/$ks" \\
                  --kustomization-file "./kubernetes/flux/$ks.yaml" --dry-run | kubeconform -strict
              done
              flux install --export > /tmp/gotk-components.yaml
              kubectl kustomize kubernetes/apps | kubeconform -strict -ignore-missing-schemas
"""


@pytest.mark.parametrize("then, judged", [
    ("", False),
    ("      - run: flux reconcile kustomization apps --with-source\n", True),
    ("      - run: helm template web charts/web --validate\n", True),  # validates against the cluster
    ("      - run: kubectl kustomize kubernetes/apps | kubectl apply -f -\n", True),
])
def test_flux_builds_in_dry_run_and_exports_are_offline(tmp_path, then, judged):
    write_tree(tmp_path, {".github/workflows/flux.yaml": FLUX})
    if then:
        with open(tmp_path / ".github/workflows/flux.yaml", "a") as handle:
            handle.write(then)
    found = pinned(tmp_path)
    assert bool(found) == judged, found
    if judged:
        assert found["flux.yaml:10"]["message"].startswith("flux CLI 2.4.0 installs Flux 2.4")


UNDECIDABLE = """\
    name: deploy
    on: {workflow_dispatch: {}}
    jobs:
      deploy:
        runs-on: ubuntu-latest
        steps:
          - uses: actions/checkout@v4
          - uses: azure/setup-helm@v4
            with:
              version: v3.12.3
          - name: Deploy
            run: {run}
"""


@pytest.mark.parametrize("run, why", [
    ("./scripts/deploy.sh production", "step Deploy runs ./scripts/deploy.sh, a file the repository does not hold"),
    ("bash scripts/release.sh", "scripts/release.sh:2 runs `make`, which runs what kubehop does not read"),
    ("curl -fsSL https://example.com/install.sh | bash", "step Deploy runs bash on a script it reads from standard "
                                                         "input"),
    ("bash ../infra/deploy.sh", "step Deploy runs ../infra/deploy.sh, which leaves the repository"),
    ('$DEPLOY_CMD "${{ inputs.release }}"', "step Deploy runs `$DEPLOY_CMD`, a command kubehop cannot work out"),
    ("helm secrets upgrade web charts/web -f secrets.yaml",
     "step Deploy runs `helm secrets`, a helm command kubehop's data does not classify"),
    ("echo 'it is", "step Deploy runs a script kubehop cannot read (a ' left open at line 1)"),
    ("echo " + "$(echo " * 20 + ")" * 20,
     "step Deploy runs a script kubehop cannot read (substitutions nested more than 16 deep at line 1)"),
])
def test_a_job_kubehop_cannot_read_to_the_end_keeps_its_finding(tmp_path, run, why):
    write_tree(tmp_path, {".github/workflows/deploy.yaml": UNDECIDABLE.replace("{run}", json.dumps(run)),
                          "scripts/release.sh": "#!/bin/sh\nmake deploy ENV=prod\n"})
    (finding,) = pinned(tmp_path).values()
    assert (finding["rule"], finding["line"]) == ("client-tool/unsupported", 10)
    assert f"of job deploy, which kubehop cannot tell reaches no cluster: {why}" in finding["message"], \
        finding["message"]


def test_an_action_kubehop_does_not_know_leaves_the_job_undecided(tmp_path):
    step = "          - uses: koslib/helm-eks-action@v1\n            with:\n              command: helm upgrade web ./web\n"
    write_tree(tmp_path, {".github/workflows/deploy.yaml": UNDECIDABLE.replace(
        "          - name: Deploy\n            run: {run}\n", step)})
    (finding,) = pinned(tmp_path).values()
    assert "step 3 uses koslib/helm-eks-action, an action kubehop does not know" in finding["message"]


def test_a_local_composite_action_is_read_and_a_script_link_out_of_the_repository_is_not(tmp_path):
    write_tree(tmp_path, {".github/workflows/deploy.yaml": UNDECIDABLE.replace(
        "          - name: Deploy\n            run: {run}\n", "          - uses: ./.github/actions/render\n"),
        ".github/actions/render/action.yml": """\
            name: render
            runs:
              using: composite
              steps:
                - shell: bash
                  run: helm dependency build charts/web && helm lint charts/web
        """})
    assert not pinned(tmp_path)
    outside = tmp_path.parent / f"{tmp_path.name}-outside.sh"
    outside.write_text("#!/bin/sh\necho fine\n")
    (tmp_path / "scripts").mkdir()
    os.symlink(outside, tmp_path / "scripts" / "render.sh")
    write_tree(tmp_path, {".github/actions/render/action.yml": """\
        runs:
          using: composite
          steps:
            - {shell: bash, run: ./scripts/render.sh}
    """})
    (finding,) = pinned(tmp_path, exits=(3,)).values()  # the walk names the link it does not follow
    assert "runs ./scripts/render.sh, which leaves the repository" in finding["message"]


@pytest.mark.parametrize("program, args, does", [
    ("kubectl", ["-n", "flux-system", "wait", "kustomization/apps"], CLUSTER),
    ("kubectl", ["--context=prod", "apply", "-f", "-"], CLUSTER),
    ("kubectl", ["kustomize", "apps", "--enable-helm"], OFFLINE),
    ("kubectl", ["version", "--client"], OFFLINE),
    ("kubectl", ["version"], CLUSTER),
    ("kubectl", ["set", "image", "-f", "d.yaml", "app=x:1", "--local", "-o", "yaml"], OFFLINE),
    ("kubectl", ["config", "set-credentials", "ci", "--token=x"], CREDENTIALS),
    ("kubectl", ["krew", "install", "neat"], UNDECIDED),
    ("helm", ["dependency", "build", "charts/web"], OFFLINE),
    ("helm", ["upgrade", "--install", "web", "charts/web"], CLUSTER),
    ("helm", ["diff", "upgrade", "web", "charts/web"], CLUSTER),
    ("flux", ["migrate", "-f", "."], OFFLINE),
    ("flux", ["migrate"], CLUSTER),
    ("flux", ["build", "ks", "apps", "--path", "./apps"], CLUSTER),
    ("flux", ["push", "artifact", "oci://ghcr.io/x/y:1", "--path=."], OFFLINE),
    ("kind", ["create", "cluster", "--image", "kindest/node:v1.33.1"], OWN_CLUSTER),
    ("make", ["deploy"], UNDECIDED),
])
def test_what_each_command_does_is_the_data(program, args, does):
    assert ci_rules().command(program, args)[0] == does
    assert ci_rules().command("yq", ["eval", ".spec"]) is None  # a program the data does not name runs no client
