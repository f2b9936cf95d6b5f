"""Client tools the repository pins (kubectl, helm, flux: rules/client-tools.yaml), at the line of
each pin, and the node files K3s and RKE2 read as they are (rules/cluster-config/config-apis.yaml).

Two readers: `pins_in_documents` takes what a YAML or JSON file gave as it is read (aqua.yaml
packages, GitHub Actions steps with whether their job reaches a cluster, devcontainer.json features
and build args, the images of Jobs and CronJobs); `read_tool_files` walks the tree for the files the
manifest walk does not read (.tool-versions, mise TOML, env files, Dockerfiles, containerd config
templates), and the files that may set the cluster's own version: OpenTofu/Terraform .tfvars
(tfvars.py), tracked env-file keys and Talos machine-configuration templates (version_lines.py, imported
once such a file is met: a one-file run has none).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import os
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from scanner import data
from scanner.cluster_config import JOB_REACHES, JOB_UNDECIDED, NODE_FILE, JobReach, Setting, ToolPin
from scanner.model import Diagnostic, Manifest, Origin
from scanner.nodes import image_values, mapping_get, scalar, sequence_items
from scanner.sources.files.walk import SKIPPED_DIRS, read_file
from scanner.tool_rules import ClientTool, client_tools, node_files

# The file formats read, by name: asdf/mise tool versions, env files, container builds.
TOOL_VERSIONS = (".tool-versions",)
MISE = (".mise.toml", "mise.toml", ".rtx.toml", "mise.local.toml")
TFVARS = ".tfvars"  # OpenTofu/Terraform variable definitions: the cluster's version (tfvars.py)
_ENV_LINE = re.compile(r'^\s*(?:export\s+|ARG\s+|ENV\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*[= ]\s*["\']?([^"\'\s#]+)')
_VERSION = re.compile(r"^v?\d+\.\d+(\.\d+)?([-+.][0-9A-Za-z.-]*)?$")
_TOOL_PREFIXES = ("aqua:", "asdf:", "ubi:", "github:", "core:", "vfox:")


@dataclass
class ToolFiles:
    """What the tool-file walk found: client tool pins, node files, cluster versions."""

    pins: list[ToolPin] = field(default_factory=list)
    settings: list[Setting] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files_read: int = 0
    cluster: list[Any] = field(default_factory=list)  # cluster versions .tfvars, env files, templates set (VersionAssignment)
    manifest_urls: list[tuple[str, Origin]] = field(default_factory=list)  # what Talos templates have Talos apply


def _tool_named(name: str) -> ClientTool | None:
    name = name.strip().strip('"').lower()
    for prefix in _TOOL_PREFIXES:
        name = name.removeprefix(prefix)
    return next((tool for tool in client_tools().values() if name in tool.names), None)


def _tool_for_key(key: str) -> ClientTool | None:
    return next((tool for tool in client_tools().values() if key in tool.env_keys), None)


def _pinned(version: str) -> str | None:
    """A version a person pinned (v1.31.4, 1.31); None for latest, ranges, templates."""
    version = version.strip().strip('"\'')
    return version if _VERSION.match(version) else None


# --- YAML and JSON documents ----------------------------------------------------------------------

def pins_in_documents(path: str, documents: list[Any], manifests: Iterable[Manifest]) -> list[ToolPin]:
    pins: list[ToolPin] = []
    name = os.path.basename(path)
    for root in documents:
        if name in ("aqua.yaml", "aqua.yml", ".aqua.yaml"):
            pins.extend(_aqua(path, root))
        elif isinstance(root, MappingNode) and mapping_get(root, "jobs") is not None:
            pins.extend(_workflow(path, root))
        elif name.endswith("devcontainer.json"):
            pins.extend(_devcontainer(path, root))
    for manifest in manifests:
        pins.extend(_images(manifest))
    return pins


def _origin(path: str, node: Any) -> Origin:
    return Origin(path, node.start_mark.line + 1, node.start_mark.column + 1)


def _aqua(path: str, root: Any) -> Iterator[ToolPin]:
    for item in sequence_items(mapping_get(root, "packages")):
        text = scalar(mapping_get(item, "name")) or ""
        package, _, version = text.partition("@")
        version = _pinned(version) or _pinned(scalar(mapping_get(item, "version")) or "")
        tool = _tool_named(package)
        if tool is not None and version:
            yield ToolPin(tool.name, version, _origin(path, item), "aqua.yaml")


def _workflow(path: str, root: Any) -> Iterator[ToolPin]:
    """GitHub Actions steps `uses: azure/setup-kubectl@v4` with `with: version: v1.31.0`, each with
    whether its job reaches a cluster (ci_jobs.py): read once a job, for a job that pins one."""
    jobs = mapping_get(root, "jobs")
    for key, job in jobs.value if isinstance(jobs, MappingNode) else ():
        reach = None
        for step in sequence_items(mapping_get(job, "steps")):
            uses = (scalar(mapping_get(step, "uses")) or "").partition("@")[0]
            tool = next((t for t in client_tools().values() if uses in t.actions), None)
            version = mapping_get(mapping_get(step, "with"), "version")
            if tool is not None and scalar(version) and _pinned(scalar(version)):
                # here: only a workflow step that pins a client needs the job's commands read (a one-file
                # run, the pre-commit hook, imports none of the CI readers)
                from scanner.sources.cluster.ci_jobs import job_reach

                reach = reach or job_reach(path, root, scalar(key) or "", job)
                yield ToolPin(tool.name, scalar(version), _origin(path, version),
                              f"GitHub Actions step {uses} of job {reach.job}{_reach_said(reach)}", reach)


def _reach_said(reach: JobReach) -> str:
    if reach.state == JOB_REACHES:
        return f", which reaches a cluster: {reach.why}"
    if reach.state == JOB_UNDECIDED:
        return f", which kubehop cannot tell reaches no cluster: {reach.why}"
    return f", which reaches no cluster kubehop plans: {reach.why}"


def _devcontainer(path: str, root: Any) -> Iterator[ToolPin]:
    """Features (`.../kubectl-helm-minikube:1: {version, helm}`) and build args (KUBECTL_VERSION)."""
    features = mapping_get(root, "features")
    for key, options in features.value if isinstance(features, MappingNode) else ():
        feature = key.value.rsplit("/", 1)[-1].partition(":")[0].lower()
        for tool in client_tools().values():
            # `version` is the tool the feature is named for first; the others have options of their name
            version = mapping_get(options, tool.name) or (
                mapping_get(options, "version") if feature.startswith(tool.name) else None)
            if scalar(version) and _pinned(scalar(version)):
                yield ToolPin(tool.name, scalar(version), _origin(path, version), f"devcontainer feature {feature}")
    args = mapping_get(mapping_get(root, "build"), "args")
    for key, value in args.value if isinstance(args, MappingNode) else ():
        tool = _tool_for_key(key.value)
        if tool is not None and scalar(value) and _pinned(scalar(value)):
            yield ToolPin(tool.name, scalar(value), _origin(path, value), f"devcontainer build arg {key.value}")


@functools.cache
def _workload_kinds() -> frozenset[str]:
    return frozenset(w["kind"] for w in data.load("rules/workloads.yaml")["workloads"])


def _images(manifest: Manifest) -> Iterator[ToolPin]:
    """The image tags of a workload's containers that run a client tool (a kubectl CronJob)."""
    if manifest.text_only or manifest.kind not in _workload_kinds():
        return
    for value in image_values(manifest.node):
        yield from _image_pin(manifest, value)


def _image_pin(manifest: Manifest, node: ScalarNode) -> Iterator[ToolPin]:
    reference = node.value.partition("@")[0]
    name, tag = reference, None
    if reference.rfind(":") > reference.rfind("/"):
        name, _, tag = reference.rpartition(":")
    tool = next((t for t in client_tools().values() if name in t.images), None)
    if tool is not None and tag and _pinned(tag):
        yield ToolPin(tool.name, tag, manifest.origin_at(node), f"image of {manifest.object_ref}")


# --- files the manifest walk does not read --------------------------------------------------------

def read_tool_files(paths: list[str], excluded: Iterable[Any] = ()) -> ToolFiles:
    found, excluded = ToolFiles(), list(excluded)
    files = node_files()
    for path in _walk(paths):
        if any(e.matches(path) for e in excluded):
            continue
        name = os.path.basename(path)
        if name in files:
            found.settings.extend(_node_file(path, files[name]))
            found.files_read += 1
            continue
        text, problem = read_file(path)
        if problem is not None:
            if name in TOOL_VERSIONS or name in MISE:  # env files and Dockerfiles are read if they can be
                said = f"{problem.message}: its tool versions were not read"
                found.diagnostics.append(dataclasses.replace(problem, level="notice", message=said))
            continue
        found.files_read += 1
        if name.endswith(TFVARS):
            from scanner.sources.cluster.tfvars import tfvars_versions  # the cluster's version, not a tool's

            found.cluster.extend(tfvars_versions(path, text))
        elif is_template(name):
            from scanner.sources.cluster.version_lines import template_manifest_urls, template_versions

            found.cluster.extend(template_versions(path, text))
            found.manifest_urls.extend(template_manifest_urls(path, text))
        elif name in TOOL_VERSIONS:
            found.pins.extend(_tool_versions(path, text))
        elif name in MISE:
            found.pins.extend(_mise(path, text, found.diagnostics))
        else:
            found.pins.extend(_env_lines(path, text))
            if name.endswith(".env"):
                from scanner.sources.cluster.version_lines import env_versions

                found.cluster.extend(env_versions(path, text))
    return found


def tool_file(name: str) -> bool:
    """Is a file of this name one `read_tool_files` reads (a .tool-versions, an env file, a Dockerfile, a .tfvars)?"""
    return (name in TOOL_VERSIONS or name in MISE or name.endswith((".env", TFVARS)) or name == ".env"
            or name.startswith(("Dockerfile", "Containerfile")) or name.endswith(".Dockerfile")
            or name in node_files() or is_template(name))


def is_template(name: str) -> bool:
    """Is a file of this name a machine-configuration template the data has kubehop read
    (rules/cluster-version.yaml `machine_config_templates`: version_lines.py reads its lines)?"""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in _template_files())


@functools.cache
def _template_files() -> tuple[str, ...]:
    return tuple((data.load("rules/cluster-version.yaml").get("machine_config_templates") or {}).get("files", ()))


def _walk(paths: list[str]) -> Iterator[str]:
    """The tool files under `paths` (symbolic links are not followed; skipped folders as the manifest walk)."""
    for top in paths:
        if top == "-" or not os.path.lexists(top):
            continue
        if not os.path.isdir(top):
            if tool_file(os.path.basename(top)) and not os.path.islink(top):
                yield top
            continue
        stack = [top]
        while stack:
            directory = stack.pop()
            try:
                with os.scandir(directory) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError:
                continue  # the manifest walk reports a folder it cannot list
            for entry in entries:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIPPED_DIRS:
                        stack.append(entry.path)
                elif tool_file(entry.name):
                    yield entry.path


def _tool_versions(path: str, text: str) -> Iterator[ToolPin]:
    for number, line in enumerate(text.splitlines(), 1):
        words = line.partition("#")[0].split()
        tool = _tool_named(words[0]) if len(words) > 1 else None
        if tool is not None and _pinned(words[1]):
            yield ToolPin(tool.name, words[1], Origin(path, number, line.index(words[1]) + 1), ".tool-versions")


def _mise(path: str, text: str, problems: list[Diagnostic]) -> Iterator[ToolPin]:
    import tomllib  # here: few trees hold a mise file, and a one-file run (a pre-commit hook) needs none

    try:
        tools = tomllib.loads(text).get("tools")
    except tomllib.TOMLDecodeError as err:
        problems.append(Diagnostic(path, f"mise configuration that is not TOML ({err}): its tool versions "
                                         "were not read", level="warning"))
        return
    for key, value in tools.items() if isinstance(tools, dict) else ():
        tool = _tool_named(str(key))
        version = value.get("version") if isinstance(value, dict) else value[0] if isinstance(value, list) \
            and value else value
        if tool is None or not isinstance(version, str) or not _pinned(version):
            continue
        number = next((n for n, line in enumerate(text.splitlines(), 1) if str(key) in line and version in line), 0)
        yield ToolPin(tool.name, version, Origin(path, number), os.path.basename(path))


def _env_lines(path: str, text: str) -> Iterator[ToolPin]:
    """KEY=VALUE lines of env files, and ARG/ENV lines of Dockerfiles, for the keys the data names."""
    for number, line in enumerate(text.splitlines(), 1):
        match = _ENV_LINE.match(line)
        tool = _tool_for_key(match.group(1)) if match else None
        if tool is not None and _pinned(match.group(2)):
            yield ToolPin(tool.name, match.group(2), Origin(path, number, match.start(2) + 1),
                          f"{os.path.basename(path)} {match.group(1)}")


def _node_file(path: str, node_file: Any) -> Iterator[Setting]:
    folder = os.path.dirname(path)
    if node_file.unless_beside and os.path.lexists(os.path.join(folder, node_file.unless_beside)):
        return
    yield Setting("node", NODE_FILE, node_file.file, folder, Origin(path, 1), "containerd config template")
