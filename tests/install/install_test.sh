#!/usr/bin/env bash
# The installable tool: `cmake --install` into a temporary root and the .deb from `cpack -G DEB`
# (unpacked with dpkg-deb -x) each run, from a directory outside the source tree, the sweep on
# the shipped configs, `run --config gen3` by name, `workload run` and `calibrate` on the
# shipped files by name; only the listed data files are packaged (an untracked
# configs/zz-untracked.yaml is not); the Debian copyright file is there; man pages cover every
# command and option of --help; bash completion works.
# usage: install_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
tmp=$(mktemp -d /tmp/gs-install-test-XXXXXX)
untracked=$src/configs/zz-untracked.yaml
made_untracked=
cleanup() {
    [ -z "$made_untracked" ] || rm -f "$untracked"
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A config file in the source tree that the project does not list (cmake/Install.cmake): it must
# reach neither the install nor the .deb. Both are made while it exists; it is removed before
# the sweeps below read the source configs.
if [ ! -e "$untracked" ]; then
    made_untracked=1
    sed 's/^name: gen1$/name: zz-untracked/' "$src/configs/gen1.yaml" >"$untracked"
fi
echo "== cmake --install into a temporary root; cpack -G DEB"
DESTDIR=$tmp/root cmake --install "$build" --prefix /usr >/dev/null
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/pkg" >/dev/null
[ -z "$made_untracked" ] || { rm -f "$untracked"; made_untracked=; }
r=$tmp/root/usr
for f in bin/gensweep share/gensweep/configs/gen1.yaml share/gensweep/configs/SCHEMA.md \
    share/gensweep/workloads/llama3-8b-decode-4k.yaml share/gensweep/calibration/cases.yaml \
    share/doc/gensweep/copyright \
    share/man/man1/gensweep.1.gz share/bash-completion/completions/gensweep; do
    [ -e "$r/$f" ] || fail "not installed: $f"
done
[ ! -e "$r/share/gensweep/configs/zz-untracked.yaml" ] || fail "an unlisted config was installed"
head -1 "$r/share/doc/gensweep/copyright" |
    grep -qx 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' ||
    fail "share/doc/gensweep/copyright is not in the machine-readable format"
gs=$r/bin/gensweep

echo "== man pages: one per command, every option of --help in it"
cmds=$("$gs" --help | awk '/^commands:/{f=1;next} f&&/^$/{exit} f{print $1}')
[ "$(echo "$cmds" | wc -l)" -ge 10 ] || fail "command list not parsed from --help: $cmds"
for c in $cmds; do
    page=$r/share/man/man1/gensweep-$c.1.gz
    [ -f "$page" ] || fail "no man page for $c"
    text=$(zcat "$page" | sed -e 's/\\-/-/g' -e 's/\\e/\\/g')
    grep -q "^\\.TH GENSWEEP-$(echo "$c" | tr a-z A-Z) 1" <<<"$text" || fail "$c: no .TH line"
    for o in $("$gs" "$c" --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
        grep -q -- "$o" <<<"$text" || fail "gensweep-$c(1) lacks $o of gensweep $c --help"
    done
    zcat "$r/share/man/man1/gensweep.1.gz" | sed 's/\\-/-/g' | grep "fBgensweep-$c\\\\fR" >/dev/null ||
        fail "gensweep(1) lacks $c"
done
if command -v groff >/dev/null; then
    for p in "$r"/share/man/man1/*.gz; do
        w=$(zcat "$p" | groff -man -ww -z 2>&1) || fail "groff: $p"
        [ -z "$w" ] || fail "groff warnings in $p: $w"
    done
fi

echo "== bash completion"
out=$(bash -c 'source "$1"; gs=$2
    t() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _gensweep 2>/dev/null; echo "${COMPREPLY[*]}"; }
    t "$gs" swe; t "$gs" sweep --kern; t "$gs" sweep --kernels elementwise_add,soft; t "$gs" history ga' \
    _ "$r/share/bash-completion/completions/gensweep" "$gs")
[ "$out" = "$(printf 'sweep\n--kernels\nelementwise_add,softmax\ngate')" ] || fail "completion gave: $out"

# run_outside GENSWEEP: the sweep from a directory without configs/, on the installed configs,
# must equal the build tree's sweep of the source configs (compare: no regression, none missing)
ref=$tmp/ref
"$build/cli/gensweep" sweep --quiet -j 2 --no-report --kernels elementwise_add \
    --configs "$src/configs" --out "$ref" >/dev/null || fail "reference sweep failed"
run_outside() {
    local g=$1 dir
    dir=$(mktemp -d "$tmp/outside-XXXXXX")
    (
        cd "$dir"
        [ ! -e configs ] || fail "$dir/configs exists"
        local share
        share=$(dirname "$(dirname "$g")")/share/gensweep
        # files by name: the installed ones; an unknown name says where it looked
        "$g" run --config gen3 --kernel elementwise_add --shape 128x512 >run.txt 2>&1 ||
            fail "run --config gen3 outside the tree: $(cat run.txt)"
        grep -q '^generation  gen3 ' run.txt && grep -q '^status      pass' run.txt ||
            fail "run --config gen3: $(cat run.txt)"
        if "$g" run --config gen9 --kernel elementwise_add 2>err.txt; then fail "gen9 ran"; fi
        grep -qF "./configs/gen9.yaml or $share/configs/gen9.yaml" err.txt ||
            fail "the error for an unknown name does not say where it looked: $(cat err.txt)"
        for w in llama3-8b-decode-4k "$share/workloads/llama3-8b-decode-4k.yaml"; do
            "$g" workload run "$w" --config gen3 --dim kv_len=128 -j 2 --out wl >wl.txt ||
                fail "workload run $w: $(cat wl.txt)"
            grep -q '^layer total: ' wl.txt || fail "workload run $w: $(cat wl.txt)"
        done
        "$g" calibrate cases -j 2 >cal.txt 2>&1 || fail "calibrate cases: $(cat cal.txt)"
        grep -qF "validation target ($share/calibration/cases.yaml:" cal.txt ||
            fail "calibrate did not use the shipped cases: $(cat cal.txt)"
        # an explicit path wins over ./configs, ./configs over the installed configs
        mkdir configs
        sed 's/^name: gen3$/name: local3/' "$src/configs/gen3.yaml" >configs/gen3.yaml
        sed 's/^name: gen3$/name: explicit3/' "$src/configs/gen3.yaml" >gen3.yaml
        "$g" run --config gen3 --kernel elementwise_add --shape 128x512 | grep -q '^generation  local3 ' ||
            fail "run --config gen3 did not prefer ./configs/gen3.yaml"
        "$g" run --config gen3.yaml --kernel elementwise_add --shape 128x512 | grep -q '^generation  explicit3 ' ||
            fail "run --config gen3.yaml did not take ./gen3.yaml"
        rm -r configs gen3.yaml
        "$g" list gens | grep gen1 >/dev/null || fail "list gens does not find the installed configs"
        "$g" sweep --quiet -j 2 --kernels elementwise_add --out out >/dev/null ||
            fail "sweep outside the tree failed"
        grep -q "\"path\":\"$(dirname "$(dirname "$g")")/share/gensweep/configs/gen1.yaml\"" out/results.json ||
            fail "sweep did not use the installed configs"
        [ -f out/report.html ] || fail "no report.html"
        n_ref=$(grep -c '^{"id"' "$ref/results.json" || true)
        n=$(grep -c '^{"id"' out/results.json || true)
        [ "$n" -gt 0 ] && [ "$n" = "$n_ref" ] || fail "jobs: $n here, $n_ref in the source tree"
        "$g" compare "$ref/results.json" out/results.json --threshold 0 >cmp.txt ||
            fail "differs from the source tree's sweep: $(cat cmp.txt)"
        grep -q " 0 regressions" cmp.txt || fail "$(cat cmp.txt)"
        # ./configs wins over the installed ones, --configs over both
        mkdir configs && cp "$src/configs/gen2.yaml" configs/
        [ "$("$g" list gens | grep -c '^ *gen[0-9]')" = 1 ] || fail "./configs not preferred: $("$g" list gens)"
        "$g" list gens "$src/configs" | grep gen3 >/dev/null || fail "explicit DIR not used"
    )
}
run_outside "$gs"

echo "== the .deb, unpacked with dpkg-deb -x"
deb=$(ls "$tmp"/pkg/gensweep_*.deb)
[ "$(dpkg-deb -f "$deb" Package)" = gensweep ] || fail "package name"
dpkg-deb -f "$deb" Depends | grep libsqlite3 >/dev/null || fail "Depends lacks libsqlite3: $(dpkg-deb -f "$deb" Depends)"
# the NKI front end in share/gensweep/python needs Debian's python3 and numpy
dpkg-deb -f "$deb" Depends | grep -E "(^|, )python3-numpy" >/dev/null ||
    fail "Depends lacks python3-numpy: $(dpkg-deb -f "$deb" Depends)"
dpkg-deb -c "$deb" >"$tmp/deb.txt"
for f in man/man1/gensweep-sweep.1.gz doc/gensweep/copyright gensweep/workloads/llama3-8b-decode-4k.yaml \
    gensweep/calibration/cases.yaml; do
    grep -qF " ./usr/share/$f" "$tmp/deb.txt" || fail "not in the .deb: /usr/share/$f"
done
if grep -F zz-untracked "$tmp/deb.txt"; then fail "an unlisted config is in the .deb"; fi
dpkg-deb -x "$deb" "$tmp/debroot"
run_outside "$tmp/debroot/usr/bin/gensweep"
echo "install test: ok"
