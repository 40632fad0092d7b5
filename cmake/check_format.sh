#!/bin/sh
# CTest format.check and `make format-check`: every C, C++ and CUDA source of the repository is as the pinned
# .clang-format (clang-format 14, Debian bookworm's) writes it. Other clang-format versions format some
# constructs differently, so with one of those, or with none, the check skips with a message (exit 77) rather
# than fail on spacing. `make format` rewrites the files.
#   check_format.sh SOURCE_DIR [--fix]
src=${1:?usage: check_format.sh SOURCE_DIR [--fix]}
fix=${2:-}
cf=$(command -v clang-format-14 || command -v clang-format)
if [ -z "$cf" ]; then
    echo "format.check: skipped: no clang-format (Debian: apt-get install clang-format; make deps does)"
    exit 77
fi
major=$("$cf" --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
if [ "$major" != 14 ]; then
    echo "format.check: skipped: $cf is version $major; the pinned format is clang-format 14's"
    exit 77
fi
cd "$src" || exit 1
# the repository's own sources; fetched code lives in ignored folders and is not listed by git
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files=$(git ls-files '*.c' '*.h' '*.cpp' '*.cu' '*.cuh')
else
    files=$(find src include apps bench tests tools examples -name '*.[ch]' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh')
fi
if [ "$fix" = --fix ]; then
    echo "$files" | xargs "$cf" -i --style=file && echo "format: $(echo "$files" | wc -l) files formatted"
    exit $?
fi
bad=$(for f in $files; do "$cf" --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || echo "$f"; done)
if [ -n "$bad" ]; then
    echo "format.check: these files differ from .clang-format (make format rewrites them):"
    echo "$bad" | sed 's/^/  /'
    exit 1
fi
echo "format.check: $(echo "$files" | wc -l) files as .clang-format writes them"
