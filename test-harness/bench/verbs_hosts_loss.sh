#!/usr/bin/env bash
# Where an ib_write_bw run's packets went, between two `./vrdma host --verbs-socket` processes in
# two network namespaces joined by a veth pair (root). A fresh pair of hosts per run, so each
# host's exit counters are the run's: timeouts, resends, duplicates at the responder, NAKs, device
# and switch drops; plus each namespace's UDP InErrors / RcvbufErrors deltas from /proc/net/snmp.
#
#   test-harness/bench/verbs_hosts_loss.sh [WRITES] [RUNS] [MODES...]
#
# MODES are VRDMA_JAVA_OPTS values for the hosts, named by their position: the default compares
# sending WRITE payloads from the zero-copy mapping ("on") with copying them ("off"), alternating.
set -euo pipefail
WRITES=${1:-20000}
RUNS=${2:-4}
ROOT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
NS=vrdmaloss-$$
A=$NS-a
B=$NS-b
OUT=$(mktemp -d /tmp/vrdma-loss.XXXXXX)
declare -A OPTS=([on]="" [off]="-Dvrdma.shim.sendFromMapping=false")

cleanup() {
  ip netns delete "$A" 2>/dev/null || true
  ip netns delete "$B" 2>/dev/null || true
}
trap cleanup EXIT
ip netns add "$A"
ip netns add "$B"
ip link add vla netns "$A" type veth peer name vlb netns "$B"
ip -n "$A" addr add 10.77.0.1/30 dev vla
ip -n "$B" addr add 10.77.0.2/30 dev vlb
ip -n "$A" link set vla mtu 9000 up
ip -n "$B" link set vlb mtu 9000 up
ip -n "$A" link set lo up
ip -n "$B" link set lo up

# Udp: InDatagrams InErrors RcvbufErrors
snmp() { ip netns exec "$1" awk '/^Udp:/ { if (h) print $2, $4, $6; else h = 1 }' /proc/net/snmp; }

run() {
  local mode=$1 n=$2 d="$OUT/$1-$2"
  mkdir -p "$d"
  export VRDMA_JAVA_OPTS="${OPTS[$mode]}"
  ip netns exec "$A" "$ROOT/vrdma" host --verbs-socket "$d/a.sock" --underlay 10.77.0.1:6081 \
    --eni-ip 10.8.0.1 --peer-eni-ip 10.8.0.2 --peer-underlay 10.77.0.2:6081 >"$d/hostA.out" 2>&1 &
  local pa=$!
  ip netns exec "$B" "$ROOT/vrdma" host --verbs-socket "$d/b.sock" --underlay 10.77.0.2:6081 \
    --eni-ip 10.8.0.2 --peer-eni-ip 10.8.0.1 --peer-underlay 10.77.0.1:6081 >"$d/hostB.out" 2>&1 &
  local pb=$!
  for _ in $(seq 600); do [ -S "$d/a.sock" ] && [ -S "$d/b.sock" ] && break; sleep 0.1; done
  local sa0 sb0 l0
  sa0=$(snmp "$A"); sb0=$(snmp "$B"); l0=$(cut -d' ' -f1 /proc/loadavg)
  local lib="$ROOT/guest-driver-shim/target/native"
  LD_LIBRARY_PATH=$lib VRDMA_SOCKET="$d/a.sock" ip netns exec "$A" \
    ib_write_bw -d vrdma0 -s 65536 -n "$WRITES" --report_gbits -N -p 18515 >"$d/server.out" 2>&1 &
  local ps=$!
  sleep 1.5
  LD_LIBRARY_PATH=$lib VRDMA_SOCKET="$d/b.sock" timeout 300 ip netns exec "$B" \
    ib_write_bw -d vrdma0 -s 65536 -n "$WRITES" --report_gbits -N -p 18515 10.77.0.1 >"$d/client.out" 2>&1 || true
  wait "$ps" || true
  local sa1 sb1 l1
  sa1=$(snmp "$A"); sb1=$(snmp "$B"); l1=$(cut -d' ' -f1 /proc/loadavg)
  kill -TERM "$pa" "$pb"
  wait "$pa" "$pb" 2>/dev/null || true
  echo "$mode: load $l0 -> $l1, $(awk '$1 == 65536 { print $4 }' "$d/client.out") Gbit/s;" \
    "UDP (InDatagrams InErrors RcvbufErrors) A $sa0 -> $sa1, B $sb0 -> $sb1"
  grep -h "vrdma host: transport" "$d/hostA.out" "$d/hostB.out" | sed 's/^/  /'
  grep -ho '"drops":{[^}]*}' "$d/hostA.out" "$d/hostB.out" | grep -v '{}' | sort | uniq -c | sed 's/^/  switch /' || true
}

"$ROOT/vrdma" --help >/dev/null # builds once, before two hosts start at the same time
export VRDMA_SKIP_BUILD=1
modes=("${@:3}")
[ ${#modes[@]} -gt 0 ] || modes=(off on)
for i in $(seq "$RUNS"); do
  for m in "${modes[@]}"; do run "$m" "$i"; done
done
echo "run directories in $OUT"
