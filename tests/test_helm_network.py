"""helm never reaches the network without --allow-network: a values.schema.json reference out of the
chart (in the chart, a subchart folder or a subchart archive) is found before helm runs and the chart
renders with the schema check off, and helm itself runs where it can reach nothing but kubehop's
discovery (a loopback server started by each test must see no request). The chart still renders, and
its removed API is still reported."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import kustomize_or_skip
from scanner.scan import ScanOptions, scan
from scanner.sources.helm import chart_schemas, render as helm
from scanner.sources.tools import sandbox, tool_helper
from scanner.versions import Minor
from test_helm_versions import helm_or_skip

TARGET = Minor(1, 36)
PDB = "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: web\nspec:\n  minAvailable: 1\n"
PDB_RULE = "policy/v1beta1/PodDisruptionBudget"


class _Recorder(BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        self.seen.append(self.path)
        body = b'{"type": "object"}'  # what a fetched schema says: `a` (a number) then fails validation
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def server():
    handler = type("Handler", (_Recorder,), {"seen": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", handler.seen
    httpd.shutdown()
    httpd.server_close()


def schema(keyword: str, target: str) -> str:
    if keyword == "$schema":
        return json.dumps({"$schema": target, "type": "object"})
    return json.dumps({"type": "object", "properties": {"a": {keyword: target}}})


def subchart_files(name: str, schema_text: str) -> dict[str, str]:
    return {"Chart.yaml": f"apiVersion: v2\nname: {name}\nversion: 1.0.0\n", "values.yaml": "a: 1\n",
            "values.schema.json": schema_text, "templates/cm.yaml": f"apiVersion: v1\nkind: ConfigMap\n"
                                                                 f"metadata:\n  name: {name}\n"}


def write_files(folder: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text)


def archive(name: str, files: dict[str, str | bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for relative, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            member = tarfile.TarInfo(f"{name}/{relative}")
            member.size = len(data)
            tar.addfile(member, io.BytesIO(data))
    return buffer.getvalue()


def chart(root: Path, where: str, schema_text: str) -> tuple[Path, str]:
    """A chart with a removed API in its templates and `schema_text` as the values.schema.json `where`
    says; the chart, and the schema's file as notices name it."""
    folder = root / "web"
    write_files(folder, {"Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\n", "values.yaml": "a: 1\n",
                         "templates/pdb.yaml": PDB})
    if where == "chart":
        (folder / "values.schema.json").write_text(schema_text)
        return folder, f"{folder}/values.schema.json"
    if where == "subchart folder":
        write_files(folder / "charts" / "db", subchart_files("db", schema_text))
        return folder, f"{folder}/charts/db/values.schema.json"
    inner = archive("db", subchart_files("db", schema_text))
    (folder / "charts").mkdir()
    if where == "subchart archive":
        (folder / "charts" / "db-1.0.0.tgz").write_bytes(inner)
        return folder, f"{folder}/charts/db-1.0.0.tgz!db/values.schema.json"
    outer = archive("cache", {**subchart_files("cache", "{}"), "charts/db-1.0.0.tgz": inner})
    (folder / "charts" / "cache-1.0.0.tgz").write_bytes(outer)
    return folder, f"{folder}/charts/cache-1.0.0.tgz!cache/charts/db-1.0.0.tgz!db/values.schema.json"


def run_scan(paths: list[Path], helm_path: str, monkeypatch, tmp_path: Path, allow_network: bool = False):
    monkeypatch.setenv("KUBEHOP_HELM", helm_path)
    monkeypatch.setenv("KUBEHOP_CACHE_DIR", str(tmp_path / "cache"))
    return scan([str(p) for p in paths], TARGET, options=ScanOptions(allow_network=allow_network))


def rendered_pdb(result) -> list[str]:
    """The `via` of each finding for the removed PodDisruptionBudget."""
    return [f.origin.via for f in result.findings if f.rule_id == PDB_RULE]


WHERE = ["chart", "subchart folder", "subchart archive", "archive in an archive"]
REFERENCES = [("$ref", "{url}/values.json"), ("$dynamicRef", "{url}/values.json"), ("$schema", "{url}/meta.json")]


@pytest.mark.parametrize("major", [4, 3])
@pytest.mark.parametrize("where", WHERE)
def test_a_schema_reference_out_of_the_chart_is_not_followed_and_the_chart_renders(major, where, server, tmp_path,
                                                                                  monkeypatch):
    url, seen = server
    folder, schema_file = chart(tmp_path, where, schema("$ref", f"{url}/values.json"))
    result = run_scan([folder], helm_or_skip(major), monkeypatch, tmp_path)
    assert seen == []
    assert rendered_pdb(result) == ["helm release web of chart web 1.0.0"]  # rendered, not read as text
    (notice,) = [d for d in result.diagnostics if "values.schema.json" in d.message]
    assert (notice.path, notice.level) == (str(folder), "notice")
    assert f"{schema_file} has $ref '{url}/values.json'" in notice.message
    assert "--skip-schema-validation" in notice.message and "--allow-network" in notice.message
    assert not result.unrendered


@pytest.mark.parametrize("major", [4, 3])
@pytest.mark.parametrize("keyword, target", REFERENCES[1:])
def test_dynamic_refs_and_metaschemas_out_of_the_chart_are_not_followed(major, keyword, target, server, tmp_path,
                                                                        monkeypatch):
    url, seen = server
    folder, schema_file = chart(tmp_path, "chart", schema(keyword, target.format(url=url)))
    result = run_scan([folder], helm_or_skip(major), monkeypatch, tmp_path)
    assert seen == []
    assert rendered_pdb(result) == ["helm release web of chart web 1.0.0"]
    assert any(f"{schema_file} has {keyword} '{target.format(url=url)}'" in d.message for d in result.diagnostics)


@pytest.mark.parametrize("major", [4, 3])
def test_with_allow_network_helm_fetches_the_reference(major, server, tmp_path, monkeypatch):
    """The counterpart: the loopback server does see helm when it may go out (and the fetched schema then
    fails the values, so the chart is read as text, its removed API still reported)."""
    url, seen = server
    folder, _ = chart(tmp_path, "chart", schema("$ref", f"{url}/values.json"))
    result = run_scan([folder], helm_or_skip(major), monkeypatch, tmp_path, allow_network=True)
    assert seen == ["/values.json"]
    assert rendered_pdb(result) == ["helm release web of chart web 1.0.0, template read as text (helm could not "
                                    "render it)"]
    assert result.isolation == {"helm": "none (--allow-network)"}


@pytest.mark.parametrize("reference", ["file:///etc/hostname", "/etc/hostname", "../../outside.json"])
def test_a_file_reference_is_never_followed_even_with_allow_network(reference, tmp_path, monkeypatch):
    folder, schema_file = chart(tmp_path, "chart", schema("$ref", reference))
    result = run_scan([folder], helm_or_skip(4), monkeypatch, tmp_path, allow_network=True)
    assert rendered_pdb(result) == ["helm release web of chart web 1.0.0"]
    (notice,) = [d for d in result.diagnostics if "values.schema.json" in d.message]
    assert f"{schema_file} has $ref {reference!r}" in notice.message and "never followed" in notice.message


@pytest.mark.parametrize("major", [4, 3])
def test_a_metaschema_helm_has_built_in_keeps_the_schema_check(major, tmp_path, monkeypatch):
    """`$schema: http://json-schema.org/draft-07/schema#` loads nothing (measured with a proxy that logs):
    the check stays on, and a value the schema refuses is helm's verdict."""
    folder, _ = chart(tmp_path, "chart", json.dumps({"$schema": "http://json-schema.org/draft-07/schema#",
                                                     "properties": {"a": {"$ref": "#/definitions/text"}},
                                                     "definitions": {"text": {"type": "string"}}}))
    result = run_scan([folder], helm_or_skip(major), monkeypatch, tmp_path)
    assert not [d for d in result.diagnostics if "values.schema.json" in d.message]
    (entry,) = result.unrendered
    assert "values don't meet the specifications of the schema" in entry.message
    assert len(rendered_pdb(result)) == 1  # read as text: still reported


@pytest.mark.parametrize("major", [4, 3])
def test_the_network_namespace_alone_keeps_helm_from_the_server(major, server, tmp_path, monkeypatch):
    """The second layer: with kubehop's reading of the schemas switched off, helm follows the reference
    but, in its network namespace, reaches nothing (the host's loopback included); the chart helm then
    fails on is read as text, its removed API still reported."""
    if sandbox.namespace() is None:
        pytest.skip(f"no network namespace here ({sandbox.why_not()})")
    url, seen = server
    monkeypatch.setattr(chart_schemas, "remote_references", lambda *args: [])
    folder, _ = chart(tmp_path, "subchart archive", schema("$ref", f"{url}/values.json"))
    result = run_scan([folder], helm_or_skip(major), monkeypatch, tmp_path)
    assert seen == []
    (entry,) = result.unrendered
    assert "connection refused" in entry.message and f"{url}/values.json" in entry.message
    assert rendered_pdb(result) == ["helm release web of chart web 1.0.0, template read as text (helm could not "
                                    "render it)"]
    assert result.isolation["helm"].startswith("network namespace")


@pytest.mark.parametrize("major", [4, 3])
def test_without_a_namespace_helm_renders_with_closed_proxies(major, server, tmp_path, monkeypatch):
    """Where no namespace can be had (switched off here, as on macOS or where user namespaces are
    forbidden), charts render as before, the schema reading still holds, and reports say so."""
    monkeypatch.setattr(sandbox, "ENABLED", False)
    url, seen = server
    folder, _ = chart(tmp_path, "subchart folder", schema("$ref", f"{url}/values.json"))
    plain = tmp_path / "plain"
    write_files(plain, {"Chart.yaml": "apiVersion: v2\nname: plain\nversion: 1.0.0\n", "templates/pdb.yaml": PDB})
    result = run_scan([folder, plain], helm_or_skip(major), monkeypatch, tmp_path)
    assert seen == []
    assert sorted(rendered_pdb(result)) == ["helm release plain of chart plain 1.0.0",
                                            "helm release web of chart web 1.0.0"]
    assert result.isolation["helm"] == "closed proxies only (no network namespace here: switched off)"


def test_a_helm_that_cannot_skip_the_schema_check_has_the_chart_read_as_text(server, tmp_path, monkeypatch):
    url, seen = server
    monkeypatch.setattr(helm, "SKIP_SCHEMA", (99, 0))  # as helm 3.13-3.15, which have no --skip-schema-validation
    folder, _ = chart(tmp_path, "chart", schema("$ref", f"{url}/values.json"))
    result = run_scan([folder], helm_or_skip(4), monkeypatch, tmp_path)
    assert seen == []
    (entry,) = result.unrendered
    assert "cannot be told not to (--skip-schema-validation is helm 99.0 and later)" in entry.message
    assert len(rendered_pdb(result)) == 1


def test_a_kustomize_helm_charts_entry_is_checked_the_same_way(server, tmp_path, monkeypatch):
    command = kustomize_or_skip()
    monkeypatch.setenv("KUBEHOP_KUSTOMIZE" if command[1] == "build" else "KUBEHOP_KUBECTL", command[0])
    url, seen = server
    app = tmp_path / "app"
    chart(app / "charts", "subchart archive", schema("$ref", f"{url}/values.json"))
    (app / "kustomization.yaml").write_text("helmCharts:\n  - name: web\n    releaseName: web\n")
    result = run_scan([app], helm_or_skip(4), monkeypatch, tmp_path)
    assert seen == []
    assert [f.rule_id for f in result.findings] == [PDB_RULE]
    (notice,) = [d for d in result.diagnostics if "values.schema.json" in d.message]
    assert notice.path == str(app / "kustomization.yaml") and notice.message.startswith("helmCharts entry 1")


# --- Reading the schemas ------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ('{"$ref": "#/definitions/a"}', []),
    ('{"$dynamicRef": "#meta"}', []),
    ('{"$schema": "http://json-schema.org/draft-07/schema#"}', []),
    ('{"$schema": "https://json-schema.org/draft/2020-12/schema"}', []),
    ('{"$id": "http://example.com/values.json"}', []),  # an identifier alone loads nothing
    ('{"$ref": "http://json-schema.org/draft-07/schema#/definitions/x"}', []),
    ('{"$schema": "http://json-schema.org/draft-03/schema#"}', [("$schema", True)]),  # helm 4 fetches it
    ('{"$ref": "https://json-schema.org/draft-07/schema#"}', [("$ref", True)]),  # helm 3 fetches it
    ('{"$ref": "https://example.com/a.json"}', [("$ref", True)]),
    ('{"x-anything": [{"$ref": "http://example.com/a.json"}]}', [("$ref", True)]),
    ('{"$id": "http://example.com/base/", "properties": {"a": {"$ref": "b.json"}}}', [("$ref", True)]),
    ('{"properties": {"a": {"$ref": "b.json"}}}', [("$ref", False)]),  # helm 4: file:///b.json
    ('{"$ref": "file:///etc/passwd"}', [("$ref", False)]),
    ('{"$ref": "urn:example:a"}', [("$ref", False)]),
    ('{"$ref": "#", "$ref": "http://example.com/a.json"}', [("$ref", True)]),  # a key twice: both are seen
    ('{"\\u0024ref": "http://example.com/a.json"}', [("$ref", True)]),
    ('{"$recursiveRef": "http://example.com/a.json"}', [("$recursiveRef", True)]),
    ('{not json, "$ref": "http://example.com"}', [("", False)]),
    ('{not json and no reference}', []),
])
def test_references_out_of_the_document_are_found(text, expected):
    found = chart_schemas.references_in(text.encode(), "values.schema.json")
    assert [(r.keyword, r.fetched) for r in found] == expected


def test_subcharts_helm_does_not_load_are_not_read(tmp_path):
    """helm skips charts/ entries starting with `_` or `.`; files in charts/ that are not .tgz are no charts."""
    folder = tmp_path / "web"
    for name in ("_helpers", ".hidden"):
        write_files(folder / "charts" / name, {"values.schema.json": schema("$ref", "http://example.com")})
    write_files(folder, {"charts/notes.json": schema("$ref", "http://example.com")})
    assert chart_schemas.remote_references(str(folder)) == []


def test_an_archive_that_unpacks_past_the_bound_counts_as_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(chart_schemas, "_MAX_ARCHIVE_BYTES", 1 << 20)
    folder = tmp_path / "web"
    (folder / "charts").mkdir(parents=True)
    (folder / "charts" / "bomb-1.0.0.tgz").write_bytes(archive("bomb", {"zeros": bytes(4 << 20)}))
    (found,) = chart_schemas.remote_references(str(folder))
    assert found.keyword == "" and "unpack" in found.describe() and "more than 1 MiB" in found.describe()
    assert chart_schemas.refused([found], allow_network=True) == [found]


def test_a_copy_of_the_chart_is_named_as_the_tree_names_it(tmp_path):
    folder, _ = chart(tmp_path, "subchart folder", schema("$ref", "http://example.com/a.json"))
    (found,) = chart_schemas.remote_references(str(folder), "charts/web")
    assert found.file == "charts/web/charts/db/values.schema.json"


# --- The namespace -----------------------------------------------------------------------------

@pytest.fixture
def namespace():
    helper = sandbox.namespace()
    if helper is None:
        pytest.skip(f"no network namespace here ({sandbox.why_not()})")
    return helper


PROBE = """
import socket, sys
host_port, ours = int(sys.argv[1]), int(sys.argv[2])
for address in (("127.0.0.1", host_port), ("192.0.2.1", 80)):
    try:
        socket.create_connection(address, timeout=5).close()
        print("reached", address[0])
    except OSError as err:
        print("refused", address[0])
with socket.create_connection(("127.0.0.1", ours), timeout=5) as conn:
    print(conn.recv(100).decode())
"""


def test_a_tool_in_the_namespace_reaches_kubehops_socket_and_nothing_else(namespace, server):
    url, seen = server
    listener = namespace.listener()
    with listener:
        def answer() -> None:
            conn, _ = listener.accept()
            with conn:
                conn.sendall(b"kubehop")

        threading.Thread(target=answer, daemon=True).start()
        done = namespace.run([sys.executable, "-c", PROBE, url.rsplit(":", 1)[1], str(listener.getsockname()[1])],
                             dict(os.environ), 30)
    assert done.stdout.split("\n")[:3] == ["refused 127.0.0.1", "refused 192.0.2.1", "kubehop"], done.stderr
    assert seen == []


def test_a_bounded_run_in_the_namespace_is_timed_and_killed_with_what_it_started(namespace, tmp_path):
    out, err = str(tmp_path / "out"), str(tmp_path / "err")
    assert namespace.run_to_files(["sh", "-c", "echo hi; echo oh >&2"], dict(os.environ), 30, out, err,
                                  1 << 31, 1 << 20) == 0
    assert (Path(out).read_text(), Path(err).read_text()) == ("hi\n", "oh\n")
    started = tmp_path / "started"
    with pytest.raises(subprocess.TimeoutExpired):
        namespace.run_to_files(["sh", "-c", f"sleep 60 & echo $! > {started}; wait"], dict(os.environ), 1, out,
                               err, 1 << 31, 1 << 20)
    assert _gone(int(started.read_text()))  # its process group went with it


def _gone(pid: int, seconds: float = 20) -> bool:
    """Has `pid` died? A SIGKILL takes effect when the process is next scheduled: on a loaded machine,
    a moment after it is sent."""
    deadline = time.monotonic() + seconds
    while _running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _running(pid: int) -> bool:
    """Is `pid` a live process (not gone, not a zombie waiting to be reaped)?"""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_the_helper_runs_tools_in_kubehops_current_folder(namespace, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    where = namespace.run([sys.executable, "-c", "import os; print(os.getcwd())"], dict(os.environ), 30).stdout
    assert os.path.realpath(where.strip()) == os.path.realpath(tmp_path)


def test_no_module_of_the_working_folder_stands_in_for_the_standard_library(tmp_path, monkeypatch):
    """The helper's interpreter is isolated: a scanned tree holding json.py at its top, scanned from
    there, runs nothing."""
    marker = tmp_path / "ran"
    for name in ("json", "ctypes", "socket", "subprocess", "threading"):
        (tmp_path / f"{name}.py").write_text(f"open({str(marker)!r}, 'w').write('{name}')\n")
    monkeypatch.chdir(tmp_path)
    helper, _ = tool_helper.start("namespace")  # its interpreter has imported everything, namespace or not
    if helper is not None:
        helper.run(["true"], dict(os.environ), 30)
        helper.process.stdin.close()
        helper.process.wait(30)
    assert not marker.exists()
