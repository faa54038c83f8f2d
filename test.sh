#!/usr/bin/env bash
# Runs every test of the project (the command CI runs). Installs the system packages the tests
# need when they are missing (Debian/Ubuntu; needs root or sudo), then runs the Maven build.
# Extra arguments go to Maven, e.g. ./test.sh -pl vnic-model -Dtest=LinkModelTest
set -euo pipefail
ROOT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
cd "$ROOT"
# shellcheck source=.ci/java-env.sh
. .ci/java-env.sh
vrdma_select_jdk
vrdma_require_maven

# Debian packages the tests use, as "command:package" and, for packages without a command,
# "file:package".
NEEDED_COMMANDS="tshark:tshark gcc:gcc make:make objdump:binutils ibv_devinfo:ibverbs-utils ib_write_bw:perftest iperf3:iperf3 ping:iputils-ping ip:iproute2 sysctl:procps"
NEEDED_FILES="/usr/include/infiniband/verbs.h:libibverbs-dev"
missing=""
for entry in $NEEDED_COMMANDS; do
  command -v "${entry%%:*}" >/dev/null 2>&1 || missing="$missing ${entry#*:}"
done
for entry in $NEEDED_FILES; do
  [ -e "${entry%%:*}" ] || missing="$missing ${entry#*:}"
done
if [ -n "$missing" ]; then
  echo "test.sh: installing system packages the tests need:$missing" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  # wireshark-common asks whether non-root users may capture; answer for it.
  echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections 2>/dev/null || true
  $SUDO apt-get update -q
  # shellcheck disable=SC2086
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
fi

# The Testcontainers lab backend's tests need a Docker engine; no image is pulled.
# shellcheck source=.ci/docker-engine.sh
. .ci/docker-engine.sh
vrdma_docker_engine
trap vrdma_docker_engine_stop EXIT

echo "test.sh: JDK $JAVA_HOME; running mvn verify" >&2
mvn -B -ntp verify "$@"
