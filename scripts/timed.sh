#!/bin/sh
# timed.sh LABEL COMMAND...: runs COMMAND and says how long it took, for
# make test's parts; the times are kept in .test-times until
# "timed.sh --summary" prints them all, with the time since
# "timed.sh --start", and removes the file. A failing COMMAND fails with
# its own status, after saying how long it ran. Parts that run at once
# (make test's set-up) each append their own line when they end.
set -u
times=.test-times
mmss() { printf '%dm %02ds' $(($1 / 60)) $(($1 % 60)); }
case "$1" in
--start)
  date +%s >"$times.start"
  rm -f "$times"
  exit 0
  ;;
--summary)
  echo "make test: time per part (install and images ran beside vet and the cross-build)"
  cat "$times"
  if [ -f "$times.start" ]; then
    printf '  %-40s %s\n' "make test, start to end" "$(mmss $(($(date +%s) - $(cat "$times.start"))))"
  fi
  rm -f "$times" "$times.start"
  exit 0
  ;;
esac
label=$1
shift
start=$(date +%s)
"$@"
status=$?
line=$(printf '  %-40s %s' "$label" "$(mmss $(($(date +%s) - start)))")
[ $status -ne 0 ] && line="$line (failed, exit $status)"
echo "$line" >>"$times"
echo "make test:$line"
exit $status
