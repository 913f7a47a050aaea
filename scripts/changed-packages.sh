#!/usr/bin/env bash
# changed-packages.sh [BASE] prints the Go packages (./dir patterns) a change touches directly:
# the folders of the files changed since the branch left BASE (default main), committed or not,
# new files included. A file in a folder without Go files (testdata, a template's assets)
# counts for the nearest folder above it that has some; files outside every package (docs, the
# Makefile) count for none. `make check` tests these.
set -euo pipefail
base=${1:-main}
cd "$(git rev-parse --show-toplevel)"
since=$(git merge-base HEAD "$base")
{
  git diff --name-only "$since" -- # the work tree against where the branch left base
  git ls-files --others --exclude-standard
} | sort -u | while IFS= read -r f; do
  d=$(dirname "$f")
  while [[ $d != . ]] && ! compgen -G "$d/*.go" >/dev/null; do
    d=$(dirname "$d")
  done
  # A folder the main module builds (controlplane/ is a module of its own; e2e/ needs its tags).
  if [[ $d != . && $d != controlplane* && $d != e2e ]] && [[ -d $d ]]; then
    echo "./$d"
  fi
done | sort -u | tr '\n' ' '
