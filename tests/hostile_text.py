"""Text a pull request can put in a tree to steer what reads kubehop's output (issue 21), and the
checks every output must pass: the hostile-output tests, the Action's and the fuzzer's share them.

A terminal acts on escape sequences (OSC 8 hides a link behind text, CSI repaints) and on C1
controls; bidirectional controls make text read as what it is not; a newline, a carriage return or
a line separator starts a new log line; a GitHub Actions runner reads a line starting with `::` (after
blanks), or holding `##[`, as a workflow command; Markdown and SARIF turn `[x](…)` into links and
`<img …>` into HTML.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

OSC8 = "\x1b]8;;http://x\x07"  # a terminal hyperlink to http://x …
OSC8_END = "\x1b]8;;\x07"  # … ending here
CSI = "\x1b[2J"  # clear the screen
C1 = "\x9b31m\x85"  # 8-bit CSI (red), NEXT LINE
BIDI = "\u202e\u2066"  # RIGHT-TO-LEFT OVERRIDE, LEFT-TO-RIGHT ISOLATE
SEPARATORS = "\u2028\u2029"
WORKFLOW = "\r\n::error::pwned ##[error]pwned"
MARKUP = "<img src=x onerror=alert(1)> [x](javascript:alert(1)) @mention"
HOSTILE = f"{OSC8}link{OSC8_END}{CSI}{C1}{BIDI}{SEPARATORS}{WORKFLOW} {MARKUP}"
# A file or folder name cannot hold "/": the same text with a DIVISION SLASH, and a byte that is no UTF-8.
HOSTILE_FILE = HOSTILE.replace("/", "\u2215")
NOT_UTF8 = b"latin\xff".decode("utf-8", "surrogateescape")
# An annotation key a rule matches with a `*` (which, as Kubernetes' keys, spans no line break).
ANNOTATION = "container.seccomp.security.alpha.kubernetes.io/" + HOSTILE.replace("\n", "")

# What no output may hold raw (a newline only as the end of a line kubehop wrote).
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# A workflow command kubehop writes (--format github): an annotation titled "kubehop …".
KUBEHOP_COMMAND = re.compile(r"^::(error|warning|notice) (?:[^:]*,)?title=kubehop[^:,]*::")


def yaml_string(text: str) -> str:
    """`text` as a YAML double-quoted scalar (JSON's escapes are YAML's)."""
    return json.dumps(text)


def log_problems(text: str, commands_allowed: bool = False) -> list[str]:
    """Why `text` is unsafe to print on a terminal or in a CI log; [] when it is safe. With
    `commands_allowed`, lines that are kubehop's own annotations may start with `::`."""
    problems = []
    for number, line in enumerate(text.split("\n"), start=1):
        raw = RAW.search(line)
        if raw:
            problems.append(f"line {number}: raw {raw.group(0)!r}: {line[:160]!r}")
        if line.lstrip().startswith("::") and not (commands_allowed and KUBEHOP_COMMAND.match(line)):
            problems.append(f"line {number}: a workflow command: {line[:160]!r}")
        if "##[" in line:
            problems.append(f"line {number}: '##[': {line[:160]!r}")
    return problems


def hostile_tree(root: Path) -> Path:
    """A repository whose names, namespaces, files, folders, annotation keys, label values, charts,
    HelmReleases and kustomizations all carry HOSTILE; each also makes a finding or an input problem."""
    name = yaml_string(HOSTILE)
    files = {
        f"{HOSTILE_FILE}/{HOSTILE_FILE}.yaml": (
            f"apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: {name}\n  namespace: {name}\n"
            f"  labels: {{app: {name}}}\nspec: {{}}\n"),
        # plain content in a hostile file name: `kubehop fix` prints its diff
        f"{HOSTILE_FILE}.yaml": "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: plain\nspec: {}\n",
        f"{NOT_UTF8}.yaml": "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata:\n  name: latin\n",
        "pods.yaml": (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: pods\nspec:\n  template:\n    metadata:\n"
            "      annotations:\n"
            f"        {yaml_string(ANNOTATION)}: runtime/default\n"
            f"        {yaml_string('seccomp.security.alpha.kubernetes.io/pod')}: {name}\n"
            f"    spec:\n      nodeSelector: {{beta.kubernetes.io/arch: {name}}}\n"
            "      containers: [{name: c, image: x}]\n"),
        "releases.yaml": (
            "apiVersion: helm.toolkit.fluxcd.io/v2beta1\nkind: HelmRelease\n"
            f"metadata: {{name: {name}, namespace: {name}}}\n"
            f"spec:\n  chart:\n    spec: {{chart: {name}, version: {name}, sourceRef: {{kind: HelmRepository, "
            f"name: {name}}}}}\n"
            "---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n"
            f"metadata: {{name: {name}, namespace: {name}}}\n"
            "spec:\n  chart:\n    spec: {chart: cilium, version: 1.14.0, sourceRef: {kind: HelmRepository, name: c}}\n"),
        f"chart{HOSTILE_FILE}/Chart.yaml": f"apiVersion: v2\nname: {name}\nversion: 1.0.0\n",
        f"chart{HOSTILE_FILE}/values.yaml": f"name: {name}\n",
        f"chart{HOSTILE_FILE}/templates/{NOT_UTF8}.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
        f"chart{HOSTILE_FILE}/templates/pdb.yaml": (
            "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: {{ .Values.name | quote }}\n"),
        f"kustomize{HOSTILE_FILE}/kustomization.yaml": (
            f"resources: [{yaml_string(HOSTILE_FILE + '.yaml')}, cronjob.yaml]\n"),
        f"kustomize{HOSTILE_FILE}/cronjob.yaml": f"apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {{name: {name}}}\n",
        f"broken{HOSTILE_FILE}.yaml": f"apiVersion: v1\nkind: ConfigMap\nmetadata: [{HOSTILE}\n",
        # an upgrade order `plan` rewrites: its diff (in the Markdown plan) shows the lines around the version
        f"upgrade{HOSTILE_FILE}/plans.yaml": (
            f"apiVersion: upgrade.cattle.io/v1\nkind: Plan\nmetadata:\n  name: {name}\n  namespace: {name}\n"
            "spec:\n  concurrency: 1\n  serviceAccountName: system-upgrade\n  upgrade:\n    image: rancher/k3s-upgrade\n"
            f"  version: v1.31.14+k3s1  # ##[error]pwned {BIDI}\n"
            f"  ::error::pwned: {name}  # ##[error]pwned {BIDI}{SEPARATORS}\n"),
    }
    (root / ".git").mkdir(parents=True)
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return root


# .kubehop.yaml files a pull request may write, each refused with a message that quotes it
HOSTILE_CONFIGS = {
    "key": f"{yaml_string(HOSTILE)}: 1\n",
    "target": f"target: {yaml_string(HOSTILE)}\n",
    "baseline": f"baseline: {yaml_string(HOSTILE_FILE)}\n",
    "ignore": f"ignore: {yaml_string(HOSTILE)}\n",
    "severity": f"severity: {{{yaml_string(HOSTILE)}: {yaml_string(HOSTILE)}}}\n",
    "raw": f"target: '1.36'\n# {HOSTILE}\n",
}
