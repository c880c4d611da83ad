#!/usr/bin/env bash
# Write the man pages of gensweep from its own --help text, so they cannot drift from it:
# gensweep.1 (the command list) and gensweep-CMD.1 for every command `gensweep --help` lists.
# usage: gen-man.sh GENSWEEP_BINARY OUT_DIR   (run at build time; writes OUT_DIR/*.1)
set -euo pipefail
gs=$1
out=$2
mkdir -p "$out"
version=$("$gs" --version | awk '{print $2}')

# roff-escape help text: backslashes, leading control characters, hyphens (so options are
# typed as ASCII hyphen-minus when copied from the rendered page)
esc() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

header() { # NAME SUMMARY
    local up
    up=$(printf '%s' "$1" | tr '[:lower:]' '[:upper:]')
    printf '.TH %s 1 "" "gensweep %s" "gensweep manual"\n' "$up" "$version"
    printf '.SH NAME\n%s \\- %s\n' "$(printf '%s' "$1" | esc)" "$(printf '%s' "$2" | esc)"
}

top=$("$gs" --help)
summary=$(printf '%s\n' "$top" | sed -n '1s/^gensweep [^ ]* - //p')
commands=$(printf '%s\n' "$top" | awk '/^commands:/{f=1;next} f&&/^$/{exit} f{print}')

{
    header gensweep "$summary"
    printf '.SH SYNOPSIS\n.nf\n'
    printf '%s\n' "$top" | awk '/^usage:/{f=1} f&&/^$/{exit} f{print}' | esc
    printf '.fi\n.SH COMMANDS\n'
    while read -r name text; do
        printf '.TP\n.B %s\n%s\nSee \\fBgensweep\\-%s\\fR(1).\n' "$(printf '%s' "$name" | esc)" \
            "$(printf '%s' "$text" | esc)" "$(printf '%s' "$name" | esc)"
    done <<<"$commands"
    printf '.SH EXIT STATUS\n'
    printf '%s\n' "$top" | sed -n 's/^exit status: //p' | esc
    printf '.SH FILES\n.TP\n.I configs\nThe generation configs when no \\fB\\-\\-configs\\fR is given: ./configs if it exists,\n'
    printf 'else the configs installed with gensweep (\\fI../share/gensweep/configs\\fR next to the binary).\n'
    printf 'A config named by a generation name (\\fB\\-\\-config gen3\\fR) is ./configs/gen3.yaml, else the installed one.\n'
    printf '.TP\n.I workloads, calibration\nThe shipped model layers and calibration cases (\\fI../share/gensweep/workloads\\fR, \\fI../share/gensweep/calibration\\fR):\n'
    printf 'a bare name (\\fBworkload run llama3\\-8b\\-decode\\-4k\\fR, \\fBcalibrate cases\\fR) is ./workloads/NAME.yaml or ./calibration/NAME.yaml, else the installed file.\n'
    printf '.TP\n.I ../share/doc/gensweep/copyright\nWhat the repository states about copyright and licensing (Debian machine-readable format).\n'
    printf '.SH SEE ALSO\n'
    printf '%s\n' "$commands" | awk '{printf "%s\\fBgensweep\\-%s\\fR(1)", (NR>1?",\n":""), $1} END{print ""}' | sed 's/-/\\-/g; s/\\\\-/\\-/g'
} >"$out/gensweep.1"

while read -r name text; do
    help=$("$gs" "$name" --help)
    {
        header "gensweep-$name" "$text"
        printf '.SH SYNOPSIS\n.nf\n'
        printf '%s\n' "$help" | awk '/^$/{exit} {print}' | esc
        printf '.fi\n.SH DESCRIPTION\n.nf\n'
        printf '%s\n' "$help" | awk 'f{print} /^$/{f=1}' | esc
        printf '.fi\n.SH SEE ALSO\n\\fBgensweep\\fR(1)\n'
    } >"$out/gensweep-$name.1"
done <<<"$commands"
