#!/bin/sh
# page_weight.sh REPORT [BUDGET_BYTES]: the main job's report stays under its page-weight budget
# (default 3 MiB: what a browser loads at once without a wait an architect notices). The weight
# grows with the jobs, so REPORT must be that of the whole main sweep (check + perf suite of every
# configs/*.yaml); .ci/run's gate stage makes it with the optimised binary.
set -u
[ $# -ge 1 ] && [ -f "$1" ] || { echo "usage: page_weight.sh REPORT [BUDGET_BYTES]" >&2; exit 2; }
budget=${2:-3145728}
b=$(wc -c <"$1")
echo "main job report: $b bytes (budget $budget, $((budget - b)) left)"
[ "$b" -lt "$budget" ] || { echo "FAIL: $1 is over its page-weight budget" >&2; exit 1; }
