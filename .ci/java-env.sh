# Sourced by ./vrdma and ./test.sh: selects a JDK 25 and checks Maven.
# JAVA_HOME wins when it points at a JDK 25 or newer; otherwise /usr/lib/jvm is searched.

vrdma_java_major() { # prints the feature version of the java binary $1
  "$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p' | head -n1
}

vrdma_select_jdk() {
  local candidate major
  for candidate in "${JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/*25* /usr/lib/jvm/*; do
    [ -n "$candidate" ] && [ -x "$candidate/bin/java" ] && [ -x "$candidate/bin/javac" ] || continue
    major=$(vrdma_java_major "$candidate/bin/java")
    if [ -n "$major" ] && [ "${major%%.*}" -ge 25 ] 2>/dev/null; then
      export JAVA_HOME="$candidate"
      export PATH="$JAVA_HOME/bin:$PATH"
      # Maven's own libraries use sun.misc.Unsafe; JDK 25 warns about it on every build.
      case " ${MAVEN_OPTS:-} " in
        *sun-misc-unsafe*) ;;
        *) export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow" ;;
      esac
      return 0
    fi
  done
  cat >&2 <<'MSG'
vrdma needs a JDK 25 (found none in JAVA_HOME or /usr/lib/jvm).
Install one, for example Eclipse Temurin 25:
  https://adoptium.net/installation/linux/   (Debian/Ubuntu: apt-get install temurin-25-jdk)
then run again, or point JAVA_HOME at it.
MSG
  return 1
}

vrdma_require_maven() {
  if ! command -v mvn >/dev/null 2>&1; then
    echo "vrdma needs Apache Maven 3.8 or newer to build (Debian/Ubuntu: apt-get install maven)." >&2
    return 1
  fi
}
