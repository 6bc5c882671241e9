#!/bin/sh
# A misbehaving agent for the tests: fake.sh MODE. It says hello, opens
# any connection as "c1", and misbehaves at the first block as MODE says
# (its right answers are 3 µs an op: above a round trip, and within the
# time a request to it takes).
mode=$1
echo '{"type":"hello","protocol":1,"language":"sh","runtime_version":"0","library":"fake","library_version":"0"}'
[ "$mode" = silent ] && exec sleep 600
while IFS= read -r line; do
  case "$line" in
  *'"type":"open"'*)
    if [ "$mode" = echo ]; then echo "$line" >&2; echo "$line"; continue; fi
    echo '{"type":"opened","id":"c1"}' ;;
  *'"type":"block"'*)
    case "$mode" in
    hang) sleep 600 ;;
    exit) printf '{"type":"block_result","id":"c1","ns":[1,'; echo "dying mid-block" >&2; exit 3 ;;
    count) echo '{"type":"block_result","id":"c1","ns":[1,2]}' ;;
    garbage) echo 'Traceback (most recent call last): not JSON' ;;
    huge) head -c 200000 /dev/zero | tr '\0' 'x'; echo ;;
    child) sleep 600 & echo '{"type":"block_result","id":"c1","ns":[3000,3000,3000]}' ;;
    negative) echo '{"type":"block_result","id":"c1","ns":[1,-2,3]}' ;;
    *) echo '{"type":"block_result","id":"c1","ns":[3000,3000,3000]}' ;;
    esac ;;
  *'"type":"overhead"'*) echo '{"type":"overhead_result","ns":[5]}' ;;
  *'"type":"close"'*) echo '{"type":"closed","id":"c1"}' ;;
  *) echo '{"type":"error","message":"unknown"}' ;;
  esac
done
