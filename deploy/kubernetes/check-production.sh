#!/usr/bin/env bash
# Run before `kubectl apply -k deploy/kubernetes/overlays/production` (deploy/kubernetes/README.md):
# refuses an overlay whose per-cluster values were not put in. The repository cannot know them, so it
# ships placeholders that this check, and nothing else, stands between and a cluster:
#   - the image digest: `images:` → `digest:` must be the sha256 `docker push` printed for your build,
#     not the all-zero placeholder or any other digest of one repeated character;
#   - TRUST_PROXY (settings.yaml, marked PER-CLUSTER): addresses or CIDR ranges of the ingress
#     controller's pods, no IPv4 range wider than /16 and no IPv6 range wider than /48 (a whole private
#     range lets any pod in it forge a client address), never `true` or a hop count.
# Usage: deploy/kubernetes/check-production.sh [overlay directory]   (exit 0: ready; 1: what to fix, named)
set -euo pipefail
overlay="${1:-$(dirname "${BASH_SOURCE[0]}")/overlays/production}"
problems=()

digests=$(sed -nE 's/^[[:space:]]*digest:[[:space:]]*"?([^"[:space:]]*)"?.*$/\1/p' "$overlay/kustomization.yaml")
[ -n "$digests" ] || problems+=("kustomization.yaml images: no digest; the production overlay runs images by digest only")
for digest in $digests; do
  hex="${digest#sha256:}"
  if ! [[ "$digest" =~ ^sha256:[0-9a-f]{64}$ ]]; then
    problems+=("kustomization.yaml images: digest '$digest' is not sha256:<64 hex characters>")
  elif [ -z "$(tr -d "${hex:0:1}" <<<"$hex")" ]; then
    problems+=("kustomization.yaml images: digest '$digest' is a placeholder; put the digest docker push printed for your image")
  fi
done

trust=$(sed -nE 's/^[[:space:]]*TRUST_PROXY:[[:space:]]*"?([^"#]*)"?.*$/\1/p' "$overlay"/*.yaml | head -n 1 | tr -d "'[:space:]")
[ -n "$trust" ] || problems+=("TRUST_PROXY: not set in the overlay; set the ingress controller's pod range (PER-CLUSTER)")
IFS=',' read -r -a entries <<<"$trust"
for entry in "${entries[@]}"; do
  if [[ "$entry" =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+(/([0-9]+))?$ ]]; then
    if [ -n "${BASH_REMATCH[2]}" ] && [ "${BASH_REMATCH[2]}" -lt 16 ]; then problems+=("TRUST_PROXY: '$entry' is wider than /16; name the ingress controller's pod range (PER-CLUSTER)"); fi
  elif [[ "$entry" =~ ^[0-9a-fA-F:]+(/([0-9]+))?$ ]] && [[ "$entry" == *:* ]]; then
    if [ -n "${BASH_REMATCH[2]}" ] && [ "${BASH_REMATCH[2]}" -lt 48 ]; then problems+=("TRUST_PROXY: '$entry' is wider than /48; name the ingress controller's pod range (PER-CLUSTER)"); fi
  else
    problems+=("TRUST_PROXY: '$entry' is not an address or CIDR range (production refuses true and hop counts)")
  fi
done

if [ ${#problems[@]} -gt 0 ]; then
  echo "The production overlay ($overlay) is not ready to apply:" >&2
  printf '  - %s\n' "${problems[@]}" >&2
  exit 1
fi
echo "The production overlay ($overlay) names an image digest and a trusted proxy range: ready to apply."
