#!/usr/bin/env bash
# Shows what a chapter's solution adds to its skeleton: only the TODO regions differ.
#   tools/solution_diff.sh ch07_reduction
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
chapter=${1:?usage: tools/solution_diff.sh <chapter>, e.g. ch07_reduction}
[ -d "$root/solutions/$chapter" ] || { echo "no such chapter: solutions/$chapter" >&2; exit 2; }
cd "$root"
find "solutions/$chapter" -type f | sort | while read -r solution; do
  skeleton=${solution#solutions/}
  # One line of context: each hunk is framed by its BEGIN TODO / END TODO markers.
  git diff --no-index --unified=1 -- "$skeleton" "$solution" || true
done
