#!/usr/bin/env bash
# The helm and kubectl (with kustomize built in) that kubehop renders charts and builds
# kustomizations with, and the helm 3 the tests compare helm 4's renders with: a thin wrapper over
# `kubehop tools install` (scanner/tool_install.py holds the pins, and says how they are fetched and
# checked). Run it from a checkout whose dependencies are installed (`pip install -e '.[test]'`);
# after `pip install kubehop`, run `kubehop tools install` itself. Idempotent; prints the paths.
#
#   scripts/get-tools.sh                     # cache: $KUBEHOP_CACHE_DIR, else ${XDG_CACHE_HOME:-~/.cache}/kubehop;
#                                            # a usable helm and kubectl already there are kept; plus helm 3
#   scripts/get-tools.sh --runtime --pinned  # the pinned helm 4 and kubectl whatever is on PATH, no helm 3
set -euo pipefail

args=(--with-helm3)
for argument in "$@"; do
    case "$argument" in
        --runtime) args=("${args[@]/--with-helm3/}") ;;
        --pinned) args+=(--pinned) ;;
        *) echo "usage: $0 [--runtime] [--pinned]" >&2; exit 2 ;;
    esac
done
read -r -a args <<< "${args[*]}"  # without the empty word --runtime leaves

checkout="$(cd "$(dirname "$0")/.." && pwd)"
python="${KUBEHOP_PYTHON:-python3}"
if ! PYTHONPATH="$checkout" "$python" -c 'import click, yaml' 2>/dev/null; then
    echo "get-tools: $python cannot import kubehop's dependencies: run \`pip install -e '.[test]'\` first" \
         "(or set KUBEHOP_PYTHON to the python that has them)" >&2
    exit 1
fi
PYTHONPATH="$checkout${PYTHONPATH:+:$PYTHONPATH}" exec "$python" -m scanner tools install "${args[@]}"
