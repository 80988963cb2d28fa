#!/usr/bin/env bash
# Shows what a chapter's solution adds to its skeleton: only the TODO regions differ.
#   tools/solution_diff.sh ch07_reduction
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
chapter=${1:?usage: tools/solution_diff.sh <chapter>, e.g. ch07_reduction}
[ -d "$root/solutions/$chapter" ] || { echo "no such chapter: solutions/$chapter" >&2; exit 2; }
cd "$root"
# git's diff where git is installed (colour on a terminal, a pager); else diff's, the same hunks.
differ=(diff)
command -v git >/dev/null && differ=(git diff --no-index)
find "solutions/$chapter" -type f | sort | while read -r solution; do
  skeleton=${solution#solutions/}
  [ -f "$skeleton" ] || { echo "no skeleton for $solution" >&2; exit 2; }
  # One line of context: each hunk is framed by its BEGIN TODO / END TODO markers. Both tools
  # exit 1 when the files differ, as they do (git also on some errors: hence the check above).
  "${differ[@]}" --unified=1 -- "$skeleton" "$solution" || { rc=$?; [ $rc -eq 1 ] || exit $rc; }
done
