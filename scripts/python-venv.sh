# Sourced by the scripts that run a Python tool from PyPI (fuzz.sh, python-client.sh, openapi-core-check.sh):
#   python_venv <name> <requirement>   sets VENV to .local-infra/<name>, with <requirement> installed.
# A venv per tool, so their dependencies never meet; installed on first use, and again when the
# requirement changes (a version bump), which the marker file records.
python_venv() {
  VENV="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.local-infra/$1"
  local marker="$VENV/.installed-${2//[^A-Za-z0-9._-]/_}"
  if [ ! -e "$marker" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q "$2"
    touch "$marker"
  fi
}
