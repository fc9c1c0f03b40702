#!/usr/bin/env bash
# CI hydration for Flux: Flux runs no KRM functions in the cluster, so CI renders the manifests, injects the
# sidecars and publishes the result; Flux applies what was published.
#
#   examples/flux/hydrate.sh SOURCE_DIR CONFIG OUT_DIR
#
# 1. `kustomize build SOURCE_DIR` (the standalone kustomize, or `kubectl kustomize` when it is missing);
# 2. meshinject --config CONFIG: the injected manifests go to OUT_DIR/manifests.yaml;
# 3. checks before anything is published: the output is not empty, running meshinject again changes
#    nothing, and it has no `${...}` that Flux's post-build substitution would rewrite.
# The publish step is not here: the workflow (hydrate-workflow.yaml) runs `flux push artifact` on OUT_DIR.
# Exit non-zero on any failure, with nothing in OUT_DIR.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 SOURCE_DIR CONFIG OUT_DIR" >&2
  exit 2
fi
src=$1 config=$2 out=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if command -v kustomize > /dev/null; then
  kustomize build "$src" > "$work/rendered.yaml"
else
  kubectl kustomize "$src" > "$work/rendered.yaml"
fi
meshinject --config "$config" "$work/rendered.yaml" > "$work/manifests.yaml"

if [ ! -s "$work/manifests.yaml" ]; then
  echo "hydrate: no manifests from $src" >&2
  exit 1
fi
meshinject --config "$config" "$work/manifests.yaml" > "$work/again.yaml"
if ! cmp -s "$work/manifests.yaml" "$work/again.yaml"; then
  echo "hydrate: a second meshinject run changed the output" >&2
  exit 1
fi
if grep -n '\${' "$work/manifests.yaml" >&2; then
  echo "hydrate: the lines above would be rewritten by Flux post-build substitution; escape them as \$\${...}" >&2
  exit 1
fi

mkdir -p "$out"
mv "$work/manifests.yaml" "$out/manifests.yaml"
echo "hydrate: $(grep -c '^kind:' "$out/manifests.yaml") resources in $out/manifests.yaml" >&2
