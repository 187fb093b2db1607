# Sourced by the scripts that run a Python tool from PyPI (fuzz.sh, python-client.sh, openapi-core-check.sh,
# clients/python/build.sh):
#   python_venv <name> <requirement>...   sets VENV to .local-infra/<name>, with the requirements installed.
# A venv per tool, so their dependencies never meet; installed on first use, and again when the
# requirements change (a version bump), which the marker file records.
python_venv() {
  VENV="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.local-infra/$1"
  local requirements="${*:2}"
  local marker="$VENV/.installed-${requirements//[^A-Za-z0-9._-]/_}"
  if [ ! -e "$marker" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q "${@:2}"
    touch "$marker"
  fi
}
