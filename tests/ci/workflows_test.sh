#!/usr/bin/env bash
# The GitHub workflows (.github/workflows/*.yml): yamllint-clean (strict, .yamllint.yml), and
# every command they run exists: each `gensweep CMD [SUB] --option` is a command, subcommand and
# option of the built CLI (read from its --help), each `bash .ci/X` / `scripts/X` is a file of
# the repository, and the options given to .ci/sweep are `gensweep sweep` options. The checker
# is also run on broken workflows, which it must reject. Exit 77 (skipped) without yamllint.
# usage: workflows_test.sh SOURCE_DIR GENSWEEP_BINARY
set -uo pipefail
src=$1
gs=$2
cd "$src" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }

# The `run:` commands of a workflow, one per line: single-line values and `run: |` blocks, with
# backslash continuations joined and ${{ expressions }} replaced by X.
run_commands() {
    awk '
        function emit(s) { gsub(/\$\{\{[^}]*\}\}/, "X", s); print s }
        {
            line = $0
            if (inblock) {
                match(line, /^ */)
                if (line ~ /^ *$/) next
                if (RLENGTH > indent) { sub(/^ */, "", line); emit(line); next }
                inblock = 0
            }
            if (match(line, /^ *(- )?run: */)) {
                rest = substr(line, RSTART + RLENGTH)
                key = line; sub(/run:.*/, "", key); indent = length(key)
                if (key ~ /- $/) indent = indent - 2
                if (rest ~ /^[|>]/) { inblock = 1; next }
                emit(rest)
            }
        }' "$1" | awk '{ if (sub(/\\$/, "")) { acc = acc $0; next } print acc $0; acc = "" }'
}

commands=$("$gs" --help | awk '/^commands:/{f=1;next} f&&/^$/{exit} f{print $1}')
[ "$(echo "$commands" | wc -l)" -ge 10 ] || fail "cannot read the command list from $gs --help"

# check_workflow FILE: prints one line per problem; exit status 1 if any, and the number of
# commands checked on stdout's last line as "checked N".
check_workflow() {
    local wf=$1 bad=0 n=0 line seg cmd rest sub o help
    while IFS= read -r line; do
        # each command of a line (split at ; && || |)
        while IFS= read -r seg; do
            if [[ $seg =~ (^|[[:space:]/])gensweep[[:space:]]+([a-z][a-z-]*)(.*)$ ]]; then
                cmd=${BASH_REMATCH[2]}
                rest=${BASH_REMATCH[3]}
                n=$((n + 1))
                if ! grep -qx -- "$cmd" <<<"$commands"; then
                    echo "$wf: gensweep has no command '$cmd': $seg"
                    bad=1
                    continue
                fi
                help=$("$gs" "$cmd" --help 2>&1)
                if [ "$cmd" = history ]; then
                    sub=$(awk '{print $1}' <<<"$rest")
                    if grep -q "unknown subcommand" <<<"$("$gs" history "$sub" 2>&1)"; then
                        echo "$wf: gensweep history has no subcommand '$sub': $seg"
                        bad=1
                    fi
                fi
                for o in $(grep -oE -- '(^|[[:space:]])--[a-z][a-z0-9-]*' <<<"$rest"); do
                    if ! grep -qE -- "(^|[^a-z0-9-])$o([^a-z0-9-]|$)" <<<"$help"; then
                        echo "$wf: gensweep $cmd has no option $o: $seg"
                        bad=1
                    fi
                done
            fi
            if [[ $seg =~ (^|[[:space:]])bash[[:space:]]+(\.ci/[A-Za-z0-9_.-]+)(.*)$ ]]; then
                local script=${BASH_REMATCH[2]} args=${BASH_REMATCH[3]}
                n=$((n + 1))
                if [ ! -f "$script" ]; then
                    echo "$wf: no such script $script: $seg"
                    bad=1
                    continue
                fi
                case $script in
                .ci/sweep)
                    help=$("$gs" sweep --help 2>&1)
                    for o in $(grep -oE -- '(^|[[:space:]])--[a-z][a-z0-9-]*' <<<"$args"); do
                        grep -qE -- "(^|[^a-z0-9-])$o([^a-z0-9-]|$)" <<<"$help" ||
                            { echo "$wf: .ci/sweep passes $o, which gensweep sweep lacks: $seg"; bad=1; }
                    done
                    ;;
                .ci/build)
                    local preset
                    preset=$(awk '{print $1}' <<<"$args")
                    [ -z "$preset" ] || grep -q "\"name\": \"$preset\"" CMakePresets.json ||
                        { echo "$wf: no preset '$preset': $seg"; bad=1; }
                    ;;
                esac
            fi
            for f in $(grep -oE -- '(^|[[:space:]])(scripts|tests)/[A-Za-z0-9_./-]+' <<<"$seg"); do
                [ -e "$f" ] || { echo "$wf: no such file $f: $seg"; bad=1; }
            done
        done < <(sed -e 's/&&/\n/g' -e 's/||/\n/g' -e 's/;/\n/g' -e 's/|/\n/g' <<<"$line")
    done < <(run_commands "$wf")
    echo "checked $n"
    return $bad
}

if ! command -v yamllint >/dev/null; then
    echo "SKIP: yamllint is not installed (apt-get install yamllint; .ci/deps lists it)" >&2
    exit 77
fi

echo "== yamllint -s"
yamllint -s -c .yamllint.yml .github/workflows || fail "yamllint"

echo "== commands the workflows run"
total=0
for wf in .github/workflows/*.yml; do
    out=$(check_workflow "$wf") || fail "$out"
    k=$(tail -1 <<<"$out" | awk '{print $2}')
    echo "$wf: $k commands checked"
    total=$((total + k))
done
[ "$total" -ge 8 ] || fail "only $total commands found: the run: parser is broken"
grep -q 'run: bash .ci/run$' .github/workflows/ci.yml || fail "ci.yml does not run .ci/run (README)"
grep -q 'github/workflows/sweep.yml' README.md || fail "README does not point at sweep.yml"

echo "== broken workflows are rejected"
tmp=$(mktemp -d /tmp/gs-wf-test-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
i=0
for bad in "build/release/cli/gensweep frobnicate out" \
    "build/release/cli/gensweep sweep --no-such-option" \
    "gensweep history frob --db x" \
    "bash .ci/nonexistent" \
    "bash .ci/sweep --shard 1/4 --colour" \
    "bash .ci/build nosuchpreset" \
    "echo a && gensweep merge --out o --bogus x"; do
    i=$((i + 1))
    printf 'jobs:\n  t:\n    steps:\n      - run: |\n          echo ok\n          %s\n' "$bad" >"$tmp/w$i.yml"
    if check_workflow "$tmp/w$i.yml" >/dev/null; then fail "accepted: $bad"; fi
done
printf 'jobs:\n  t:\n    steps:\n      - run: gensweep sweep --kernels x \\\n          --out y\n' >"$tmp/ok.yml"
out=$(check_workflow "$tmp/ok.yml") || fail "rejected a good command: $out"
echo "workflows test: ok"
