# Sourced by the scripts/setup.d steps that need Debian packages; not a step itself (`make test` runs
# scripts/setup.d/*.sh only). One home for the "install what is missing, in one apt call" loop.

# apt_install_missing LABEL PACKAGE...: install those of the packages dpkg does not have yet (after
# `apt-get update`, without recommends); a quick no-op that says so when all are there.
apt_install_missing() {
  local label=$1
  shift
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    echo "$label packages already installed"
    return 0
  fi
  echo "installing $label packages: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}
