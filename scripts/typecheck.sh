#!/usr/bin/env bash
# mypy over the installed package names. graph/ and memory/ install as swarmgraph.graph and
# swarmgraph.memory (setuptools package-dir), which mypy cannot follow through the editable
# install's import hook, so it checks a tree of symlinks laid out as the wheel is:
# .typecheck/swarmgraph/{<swarmgraph/*>, graph -> ../../graph, memory -> ../../memory}.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tree=.typecheck/swarmgraph
rm -rf .typecheck
mkdir -p "$tree"
for entry in swarmgraph/*; do
    [[ $(basename "$entry") == __pycache__ ]] && continue
    ln -s "$root/$entry" "$tree/"
done
ln -s "$root/graph" "$tree/graph"
ln -s "$root/memory" "$tree/memory"
cd .typecheck
exec "$root/.venv/bin/mypy" --config-file "$root/pyproject.toml" -p swarmgraph "$@"
