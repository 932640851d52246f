# Sourced by the check scripts: the Python tools venv under .build/tools-venv.
# tools_venv NAME MODULE[=PIP_PACKAGE] ...  creates the venv when missing, installs what is not
# importable yet, and sets TOOLS_PYTHON to its interpreter. NAME prefixes the error messages.
TOOLS_VENV=.build/tools-venv

tools_venv() {
    local name=$1
    shift
    if [ ! -x "$TOOLS_VENV/bin/python" ]; then
        if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
            echo "$name: python3 cannot create virtual environments (no venv/ensurepip module)." >&2
            echo "$name: run 'make deps' (it installs the Debian package python3-venv), then retry." >&2
            return 1
        fi
        mkdir -p "$(dirname "$TOOLS_VENV")"
        if ! python3 -m venv "$TOOLS_VENV"; then
            rm -rf "$TOOLS_VENV"
            echo "$name: 'python3 -m venv $TOOLS_VENV' failed; 'make deps' installs python3-venv." >&2
            return 1
        fi
    fi
    local spec module package
    for spec in "$@"; do
        module=${spec%%=*}
        package=${spec#*=}
        if ! "$TOOLS_VENV/bin/python" -c "import $module" >/dev/null 2>&1; then
            "$TOOLS_VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$package"
        fi
    done
    TOOLS_PYTHON=$TOOLS_VENV/bin/python
}
