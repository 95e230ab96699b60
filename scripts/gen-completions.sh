#!/usr/bin/env bash
# Generates shell completions and man pages for the release archives.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf completions manpages
mkdir -p completions manpages
go build -o .cache/gen/sessfix .
for sh in bash zsh fish powershell; do
  .cache/gen/sessfix completion "$sh" > "completions/sessfix.$sh"
done
# Man pages come from the command tree (a hidden command).
.cache/gen/sessfix help man --dir manpages
