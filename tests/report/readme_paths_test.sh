#!/usr/bin/env bash
# Every file the README's command examples (its ```sh blocks) name as an input exists in the
# repository (the NKI example once named kernels.py and refs.py, which did not exist). A
# path counts when it starts with a folder of the repository (configs/, calibration/,
# workloads/, scripts/, tests/, kernels/, python/, docs/, .ci/) or is a bare .py/.yaml/.gsk file
# (FILE.py:FUNC is its file); globs must match something. Outputs (build/..., out/..., absolute
# paths, bare .json) are not checked. The checker is also run on a broken example.
# usage: readme_paths_test.sh SOURCE_DIR
set -uo pipefail
cd "$1" || exit 1
# prints one line per missing path; exit 1 if any, the number of paths checked on stderr
check() {
    awk '/^```sh/{f=1;next} /^```/{f=0} f' "$1" | sed -e 's/[[:space:]]#.*$//' -e 's/^#.*$//' |
        tr ' \t' '\n\n' | sed -e 's/[),;]*$//' -e 's/^[(]//' |
        grep -E '^((configs|calibration|workloads|scripts|tests|kernels|python|docs|\.ci)/[^ ]*|[A-Za-z0-9_.-]+\.(py|yaml|gsk)(:[A-Za-z_][A-Za-z0-9_]*)?)$' |
        sed 's/\.py:[A-Za-z_][A-Za-z0-9_]*$/.py/' | sort -u | {
        bad=0 n=0
        while IFS= read -r p; do
            n=$((n + 1))
            # shellcheck disable=SC2086 # globs are meant to expand
            set -- $p
            [ -e "$1" ] || { echo "README example names a missing file: $p"; bad=1; }
        done
        echo "checked $n paths" >&2
        exit $bad
    }
}
out=$(check README.md) || { echo "FAIL:" >&2; echo "$out" >&2; exit 1; }
tmp=$(mktemp -d /tmp/gs-readme-test-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf '```sh\n$B nki run kernels.py --kernel k --reference refs.py:add  # x/y\n$B run --config configs/nope.yaml\n```\n' >"$tmp/R.md"
out=$(check "$tmp/R.md" 2>/dev/null) && { echo "FAIL: a broken example was accepted" >&2; exit 1; }
[ "$(grep -c missing <<<"$out")" -eq 3 ] || { echo "FAIL: want 3 missing, got: $out" >&2; exit 1; }
echo "README examples: every named input exists"
