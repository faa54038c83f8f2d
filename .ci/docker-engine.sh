# Sourced by ./test.sh: makes sure a Docker engine answers on /var/run/docker.sock, for the
# Testcontainers lab backend's tests. Installs docker.io when dockerd is missing and starts the
# engine in the background when none runs (CI machines have no init system running it).
# An engine it started is stopped again by vrdma_docker_engine_stop (test.sh calls it on exit).

VRDMA_DOCKERD_PID=""

vrdma_docker_engine() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if docker info >/dev/null 2>&1; then
    return 0
  fi
  if ! command -v dockerd >/dev/null 2>&1; then
    echo "test.sh: installing docker.io (the Testcontainers backend's tests need an engine)" >&2
    $sudo apt-get update -q
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends docker.io
  fi
  # dockerd needs a cgroup hierarchy; a bare container has none mounted where it looks.
  if [ ! -e /sys/fs/cgroup/cgroup.controllers ] && [ ! -d /sys/fs/cgroup/memory ]; then
    $sudo mount -t cgroup2 none /sys/fs/cgroup || true
  fi
  echo "test.sh: starting dockerd (log in /tmp/vrdma-dockerd.log)" >&2
  $sudo sh -c 'nohup dockerd >/tmp/vrdma-dockerd.log 2>&1 & echo $! >/tmp/vrdma-dockerd.pid'
  VRDMA_DOCKERD_PID="$(cat /tmp/vrdma-dockerd.pid)"
  local i
  for i in $(seq 1 60); do
    if docker info >/dev/null 2>&1; then
      return 0
    fi
    sleep 1
  done
  echo "test.sh: dockerd did not answer within 60 s; its log:" >&2
  tail -n 30 /tmp/vrdma-dockerd.log >&2 || true
  return 1
}

# Stops the engine vrdma_docker_engine started, if it started one; an engine that was already
# running is left alone.
vrdma_docker_engine_stop() {
  local sudo="" i
  [ -n "$VRDMA_DOCKERD_PID" ] || return 0
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo kill -TERM "$VRDMA_DOCKERD_PID" 2>/dev/null || return 0
  for i in $(seq 1 30); do
    $sudo kill -0 "$VRDMA_DOCKERD_PID" 2>/dev/null || break
    sleep 1
  done
  rm -f /tmp/vrdma-dockerd.pid
  VRDMA_DOCKERD_PID=""
}
