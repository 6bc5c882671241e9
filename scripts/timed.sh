#!/bin/sh
# timed.sh LABEL COMMAND...: runs COMMAND and says how long it took, for
# make test's parts; the times are kept in .test-times until
# "timed.sh --summary" prints them all and removes the file. A failing
# COMMAND fails with its own status, after saying how long it ran.
set -u
times=.test-times
if [ "$1" = --summary ]; then
  echo "make test: time per part"
  cat "$times"
  rm -f "$times"
  exit 0
fi
label=$1
shift
start=$(date +%s)
"$@"
status=$?
took=$(( $(date +%s) - start ))
line=$(printf '  %-40s %dm %02ds' "$label" $((took / 60)) $((took % 60)))
[ $status -ne 0 ] && line="$line (failed, exit $status)"
echo "$line" >>"$times"
echo "make test:$line"
exit $status
