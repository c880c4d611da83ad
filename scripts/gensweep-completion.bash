# bash completion for gensweep. Commands, options and kernel names are read from the gensweep
# being completed (`gensweep --help`, `gensweep CMD --help`, `gensweep list kernels --names`),
# so the completion follows the binary it completes.
_gensweep()
{
    local cur=${COMP_WORDS[COMP_CWORD]}
    local prev=${COMP_WORDS[COMP_CWORD-1]}
    local gs=${COMP_WORDS[0]}
    COMPREPLY=()
    if [ "$COMP_CWORD" -eq 1 ]; then
        local cmds
        cmds=$("$gs" --help 2>/dev/null | awk '/^commands:/{f=1;next} f&&/^$/{exit} f{print $1}')
        mapfile -t COMPREPLY < <(compgen -W "$cmds help --help --version" -- "$cur")
        return
    fi
    local cmd=${COMP_WORDS[1]}
    case $prev in
    --configs | --config | -c)
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -d -- "$cur"; compgen -f -X '!*.yaml' -- "$cur")
        return
        ;;
    --kernels | --kernel | -k)
        # a comma-separated list: complete its last element
        local done="" last=$cur
        if [[ $cur == *,* ]]; then
            done=${cur%,*},
            last=${cur##*,}
        fi
        local names
        names=$("$gs" list kernels --names 2>/dev/null)
        mapfile -t COMPREPLY < <(compgen -P "$done" -W "$names" -- "$last")
        compopt -o nospace 2>/dev/null
        return
        ;;
    --suite)
        mapfile -t COMPREPLY < <(compgen -W "check perf all" -- "$cur")
        return
        ;;
    --out | -o | --trace-dir | --db | --baseline | --trace | --record | --json | --from | --to | --whatif | --tuning)
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return
        ;;
    esac
    if [[ $cur == -* ]]; then
        local opts
        opts=$("$gs" "$cmd" --help 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
        mapfile -t COMPREPLY < <(compgen -W "$opts --help" -- "$cur")
        return
    fi
    if [ "$COMP_CWORD" -eq 2 ]; then
        case $cmd in
        history)
            mapfile -t COMPREPLY < <(compgen -W "add show export gate" -- "$cur")
            return
            ;;
        list)
            mapfile -t COMPREPLY < <(compgen -W "gens kernels" -- "$cur")
            return
            ;;
        baseline)
            mapfile -t COMPREPLY < <(compgen -W "update" -- "$cur")
            return
            ;;
        workload)
            mapfile -t COMPREPLY < <(compgen -W "run" -- "$cur")
            return
            ;;
        help)
            local cmds
            cmds=$("$gs" --help 2>/dev/null | awk '/^commands:/{f=1;next} f&&/^$/{exit} f{print $1}')
            mapfile -t COMPREPLY < <(compgen -W "$cmds" -- "$cur")
            return
            ;;
        esac
    fi
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}
complete -F _gensweep gensweep
